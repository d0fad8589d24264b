#pragma once
// SchedulingLoop: the thread that runs the scheduling pass and the periodic tick of the Master.
// A change that may let work start only calls Request (cheap, any thread, any lock held); the
// loop then runs one pass for every request made since its previous pass, so a batch of 20,000
// queued trials costs one pass, not 20,000. The tick (agent timeouts, preemption deadlines) runs
// every `tick_interval`. The hooks take whatever lock they need themselves: the loop's own mutex
// guards only its flags and is never held while a hook runs, so lock order is
// "caller's lock, then this one" and a hook may call Request.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <thread>

#include "common/thread_annotations.h"

namespace det::master::server {

class SchedulingLoop {
 public:
  struct Hooks {
    std::function<void()> pass;  // one scheduling pass
    std::function<void()> tick;  // the periodic checks
  };

  SchedulingLoop(std::chrono::milliseconds tick_interval, Hooks hooks);
  ~SchedulingLoop();  // Stop
  SchedulingLoop(const SchedulingLoop&) = delete;
  SchedulingLoop& operator=(const SchedulingLoop&) = delete;

  // Starts the thread; requests made before are served by its first pass.
  void Start() EXCLUDES(mu_);
  // Asks for a pass; returns at once.
  void Request() EXCLUDES(mu_);
  // The owner just ran a pass itself: the requests made so far need no other.
  void Served() EXCLUDES(mu_);
  // Lets the hook that runs finish, then joins the thread; no hook runs after it returns.
  void Stop() EXCLUDES(mu_);

 private:
  void Run() EXCLUDES(mu_);

  const std::chrono::milliseconds tick_interval_;
  const Hooks hooks_;
  Mutex mu_;
  std::condition_variable_any cv_;  // a pass requested, or Stop
  bool requested_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace det::master::server
