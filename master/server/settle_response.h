#pragma once
// Settle: a handler's answer as a client would get it when it is given at once, for callers
// that dispatch to the router without the HTTP server (tests, the router fuzz target).

#include <memory>
#include <optional>
#include <utility>

#include "master/server/http_server.h"

namespace det::master::server {

// Runs the handler's worker step (HttpResponse::on_worker) and takes a deferred answer given
// right away. A long poll that still waits gives a default response (status 200, no body): its
// real status is not known yet.
inline HttpResponse Settle(HttpResponse resp) {
  if (resp.on_worker) resp = resp.on_worker();
  if (resp.deferred) {
    auto answer = std::make_shared<std::optional<HttpResponse>>();
    auto start = std::move(resp.deferred);
    start([answer](HttpResponse r) { *answer = std::move(r); });
    resp = answer->has_value() ? std::move(**answer) : HttpResponse{};
  }
  return resp;
}

}  // namespace det::master::server
