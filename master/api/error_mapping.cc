#include "master/api/error_mapping.h"

#include <nlohmann/json.hpp>

namespace det::master::api {

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kResourceExhausted: return 400;
    case StatusCode::kUnauthenticated: return 401;
    case StatusCode::kPermissionDenied: return 403;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kAlreadyExists: return 409;
    case StatusCode::kUnimplemented: return 501;
    case StatusCode::kUnavailable: return 503;
    case StatusCode::kInternal: return 500;
  }
  return 500;
}

int GrpcCodeFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return 0;
    case StatusCode::kInvalidArgument: return 3;
    case StatusCode::kNotFound: return 5;
    case StatusCode::kAlreadyExists: return 6;
    case StatusCode::kPermissionDenied: return 7;
    case StatusCode::kResourceExhausted: return 8;
    case StatusCode::kFailedPrecondition: return 9;
    case StatusCode::kUnimplemented: return 12;
    case StatusCode::kInternal: return 13;
    case StatusCode::kUnavailable: return 14;
    case StatusCode::kUnauthenticated: return 16;
  }
  return 2;
}

server::HttpResponse ErrorResponse(const Status& status) {
  server::HttpResponse resp;
  resp.status = HttpStatusFor(status.code());
  nlohmann::json body = {{"error",
                          {{"code", GrpcCodeFor(status.code())},
                           {"reason", StatusCodeName(status.code())},
                           {"error", status.message()}}}};
  resp.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return resp;
}

}  // namespace det::master::api
