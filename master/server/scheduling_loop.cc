#include "master/server/scheduling_loop.h"

#include <utility>

namespace det::master::server {

SchedulingLoop::SchedulingLoop(std::chrono::milliseconds tick_interval, Hooks hooks)
    : tick_interval_(tick_interval), hooks_(std::move(hooks)) {}

SchedulingLoop::~SchedulingLoop() { Stop(); }

void SchedulingLoop::Start() {
  MutexLock lock(&mu_);
  if (stopping_ || thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
}

void SchedulingLoop::Request() {
  MutexLock lock(&mu_);
  if (requested_) return;
  requested_ = true;
  cv_.notify_all();
}

void SchedulingLoop::Served() {
  MutexLock lock(&mu_);
  requested_ = false;
}

void SchedulingLoop::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void SchedulingLoop::Run() {
  MutexLock lock(&mu_);
  auto next_tick = std::chrono::steady_clock::now() + tick_interval_;
  while (!stopping_) {
    if (!requested_) cv_.wait_until(mu_, next_tick);
    if (stopping_) break;
    bool tick = std::chrono::steady_clock::now() >= next_tick;
    bool pass = requested_;
    requested_ = false;  // requests made while the pass runs get the next one
    lock.Unlock();
    if (tick) hooks_.tick();
    if (pass) hooks_.pass();
    lock.Lock();
    if (tick) next_tick = std::chrono::steady_clock::now() + tick_interval_;
  }
}

}  // namespace det::master::server
