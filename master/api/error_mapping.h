#pragma once
// The one place where Status codes become HTTP statuses and Determined's error body
// {"error": {"code": <grpc code>, "reason": "<CodeName>", "error": "<message>"}}.

#include "common/status.h"
#include "master/server/http_server.h"

namespace det::master::api {

int HttpStatusFor(StatusCode code);
int GrpcCodeFor(StatusCode code);
server::HttpResponse ErrorResponse(const Status& status);

}  // namespace det::master::api
