#include "master/store/sqlite/read_pool.h"

namespace det::master::store {

ReadPool::ReadPool(Opener open, size_t max_connections)
    : open_(std::move(open)), max_(max_connections < 1 ? 1 : max_connections) {}

Result<ReadPool::Lease> ReadPool::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  while (free_.empty() && opened_ >= max_) returned_.wait(lock);
  if (!free_.empty()) {
    std::unique_ptr<Db> conn = std::move(free_.back());
    free_.pop_back();
    return Lease(this, std::move(conn));
  }
  ++opened_;  // counted before opening, so other callers do not open past the maximum
  lock.unlock();
  Result<std::unique_ptr<Db>> conn = open_();
  if (!conn.ok()) {
    lock.lock();
    --opened_;
    returned_.notify_one();
    return conn.status();
  }
  return Lease(this, std::move(conn).value());
}

size_t ReadPool::opened() const {
  std::lock_guard<std::mutex> lock(mu_);
  return opened_;
}

void ReadPool::Return(std::unique_ptr<Db> conn) {
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(std::move(conn));
  returned_.notify_one();
}

}  // namespace det::master::store
