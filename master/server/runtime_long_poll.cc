#include "master/server/runtime_long_poll.h"

#include <chrono>

namespace det::master::server {

void LongPollOnLoop(RuntimeLoop* loop, Waiters* waiters, const std::string& key,
                    Waiters::TimePoint deadline, PollStep step, bool final) {
  final = final || loop->draining() || std::chrono::steady_clock::now() >= deadline;
  if ((*step)(final)) return;
  waiters->Add(key, deadline, [loop, waiters, key, deadline, step](bool timed_out) {
    loop->Post([loop, waiters, key, deadline, step, timed_out]()
                   ON_RUNTIME { LongPollOnLoop(loop, waiters, key, deadline, step, timed_out); });
  });
}

}  // namespace det::master::server
