#pragma once
// Waiters: long polls as timers instead of threads. A waiter is a callback registered under a key
// (e.g. "agent:a1", "trial:7", "alloc:7.1") with a deadline; it runs exactly once, on the
// registry's single timer thread, either when its key is notified or when the deadline passes.
// Idle waiters hold no thread, and notifying one key wakes only the waiters on that key.
//
// Registration and notification both go to the timer thread through one queue, in order, so a
// waiter added before a Notify of its key (e.g. both under the caller's lock) is always woken by
// it. A Notify of a key nobody waits on stops at a lookup (a decision that ends 20,000 queued
// allocations notifies each), and calls made while the timer thread is busy run as one batch.

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/thread_annotations.h"

namespace det::master::server {

class Waiters {
 public:
  // `timed_out` is true when the deadline passed (or the registry expired every waiter).
  using Callback = std::function<void(bool timed_out)>;
  using TimePoint = std::chrono::steady_clock::time_point;

  Waiters();
  ~Waiters();
  Waiters(const Waiters&) = delete;
  Waiters& operator=(const Waiters&) = delete;

  void Add(const std::string& key, TimePoint deadline, Callback callback);
  // Wakes every waiter currently registered on `key`; a no-op when there is none.
  void Notify(const std::string& key);
  // Runs every waiter as timed out (shutdown: long polls answer now).
  void ExpireAll();
  // Expires every waiter, then ends the timer thread. Later Adds are dropped.
  void Stop();
  // After Stop: an Add is dropped (its callback never runs).
  bool stopped() const { return stopped_.load(); }
  // Waiters registered and not yet run (an Add still in flight is not counted yet).
  size_t size() const { return count_.load(); }

 private:
  struct Entry;
  void Fire(const std::string& key, uint64_t id, bool timed_out);
  // Queues `op` for the timer thread; only the first of a burst posts (RunQueued takes them all).
  // `waiter_key`: an Add's key, counted as waited on under the same lock as the op is queued.
  void Enqueue(std::function<void()> op, const std::string* waiter_key = nullptr)
      EXCLUDES(queue_mu_);
  void RunQueued() EXCLUDES(queue_mu_);
  // A waiter on `key` has run or was dropped.
  void Unwait(const std::string& key) EXCLUDES(queue_mu_);

  boost::asio::io_context ioc_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
  std::atomic<bool> stopped_{false};
  std::atomic<size_t> count_{0};
  Mutex queue_mu_;
  std::vector<std::function<void()>> queued_ GUARDED_BY(queue_mu_);
  // Waiters per key, counted from Add (before the timer thread registers them) until they run.
  std::unordered_map<std::string, size_t> waiting_ GUARDED_BY(queue_mu_);
  // Touched only on the timer thread.
  uint64_t next_id_ = 1;
  std::unordered_map<std::string, std::map<uint64_t, std::shared_ptr<Entry>>> by_key_;
};

}  // namespace det::master::server
