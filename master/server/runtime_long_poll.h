#pragma once
// A long poll on the runtime loop: a step that answers when it can, re-run on the loop each time
// its waiter key is notified, until it answers or its deadline passes. It holds no thread while
// it waits (Waiters) and answers at once while the loop drains for shutdown.

#include <functional>
#include <memory>
#include <string>

#include "master/server/runtime_loop.h"
#include "master/server/waiters.h"

namespace det::master::server {

// Returns true once it has answered; with final = true (deadline passed, or shutting down) it
// must answer.
using PollStep = std::shared_ptr<std::function<bool(bool final)>>;

void LongPollOnLoop(RuntimeLoop* loop, Waiters* waiters, const std::string& key,
                    Waiters::TimePoint deadline, PollStep step, bool final = false) ON_RUNTIME;

}  // namespace det::master::server
