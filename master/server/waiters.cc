#include "master/server/waiters.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <vector>

namespace det::master::server {

namespace net = boost::asio;

struct Waiters::Entry {
  explicit Entry(net::io_context& ioc) : timer(ioc) {}
  net::steady_timer timer;
  Callback callback;
};

Waiters::Waiters() : work_(net::make_work_guard(ioc_)), thread_([this] { ioc_.run(); }) {}

Waiters::~Waiters() { Stop(); }

void Waiters::Add(const std::string& key, TimePoint deadline, Callback callback) {
  if (stopped_.load()) return;
  Enqueue(
      [this, key, deadline, callback = std::move(callback)]() mutable {
        if (stopped_.load()) {  // raced with Stop: answer now rather than at the deadline
          Unwait(key);
          callback(true);
          return;
        }
        ++count_;
        uint64_t id = next_id_++;
        auto entry = std::make_shared<Entry>(ioc_);
        entry->callback = std::move(callback);
        entry->timer.expires_at(deadline);
        entry->timer.async_wait([this, key, id](const boost::system::error_code& ec) {
          if (ec == net::error::operation_aborted) return;  // woken by Notify first
          Fire(key, id, true);
        });
        by_key_[key].emplace(id, std::move(entry));
      },
      &key);
}

void Waiters::Enqueue(std::function<void()> op, const std::string* waiter_key) {
  {
    MutexLock lock(&queue_mu_);
    if (waiter_key != nullptr) ++waiting_[*waiter_key];
    queued_.push_back(std::move(op));
    if (queued_.size() > 1) return;  // the post of this burst's first op runs this one too
  }
  net::post(ioc_, [this] { RunQueued(); });
}

void Waiters::RunQueued() {
  std::vector<std::function<void()>> ops;
  {
    MutexLock lock(&queue_mu_);
    ops.swap(queued_);
  }
  for (auto& op : ops) op();
}

void Waiters::Unwait(const std::string& key) {
  MutexLock lock(&queue_mu_);
  auto it = waiting_.find(key);
  if (it != waiting_.end() && --it->second == 0) waiting_.erase(it);
}

void Waiters::Notify(const std::string& key) {
  {
    MutexLock lock(&queue_mu_);
    if (waiting_.count(key) == 0) return;
  }
  Enqueue([this, key] {
    auto it = by_key_.find(key);
    if (it == by_key_.end()) return;
    std::vector<uint64_t> ids;
    for (const auto& [id, entry] : it->second) ids.push_back(id);
    for (uint64_t id : ids) Fire(key, id, false);
  });
}

void Waiters::ExpireAll() {
  Enqueue([this] {
    std::vector<std::pair<std::string, uint64_t>> all;
    for (const auto& [key, entries] : by_key_) {
      for (const auto& [id, entry] : entries) all.emplace_back(key, id);
    }
    for (const auto& [key, id] : all) Fire(key, id, true);
  });
}

void Waiters::Fire(const std::string& key, uint64_t id, bool timed_out) {
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return;
  auto found = it->second.find(id);
  if (found == it->second.end()) return;
  std::shared_ptr<Entry> entry = std::move(found->second);
  it->second.erase(found);
  if (it->second.empty()) by_key_.erase(it);
  --count_;
  Unwait(key);
  entry->timer.cancel();
  try {
    // The callback may Add again (a re-check that still has to wait): that is only posted.
    entry->callback(timed_out);
  } catch (const std::exception& e) {
    spdlog::error("long-poll waiter on {} threw: {}", key, e.what());
  }
}

void Waiters::Stop() {
  if (stopped_.exchange(true)) return;
  ExpireAll();
  work_.reset();
  // Timers cancelled by Fire complete with operation_aborted; run() returns once none is left.
  if (thread_.joinable()) thread_.join();
}

}  // namespace det::master::server
