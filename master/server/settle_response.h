#pragma once
// Settle: a handler's answer as a client would get it when it is given at once, for callers
// that dispatch to the router without the HTTP server (tests, the router fuzz target).

#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "master/server/http_server.h"

namespace det::master::server {

// Runs the handler's worker step (HttpResponse::on_worker) and takes a deferred answer given
// right away. A long poll that still waits, or an answer that another thread gives later (a
// committed metric report), gives a default response (status 200, no body): its real status
// is not known yet. The answer may arrive on any thread, hence the lock.
inline HttpResponse Settle(HttpResponse resp) {
  if (resp.on_worker) resp = resp.on_worker();
  if (resp.deferred) {
    struct Slot {
      std::mutex mu;
      std::optional<HttpResponse> answer;
    };
    auto slot = std::make_shared<Slot>();
    auto start = std::move(resp.deferred);
    start([slot](HttpResponse r) {
      std::lock_guard<std::mutex> lock(slot->mu);
      slot->answer = std::move(r);
    });
    std::lock_guard<std::mutex> lock(slot->mu);
    resp = slot->answer.has_value() ? std::move(*slot->answer) : HttpResponse{};
  }
  return resp;
}

}  // namespace det::master::server
