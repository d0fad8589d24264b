#pragma once
// DataDirLock: an exclusive flock on <data_dir>/agent.lock, held for the agent's lifetime. Two
// agents sharing a data dir would each take the other's running allocations for leftovers of a
// killed run (orphan_cleanup.h); the kernel drops the lock when its holder dies, even by kill -9.

#include <memory>
#include <string>

#include "common/status.h"

namespace det::agent {

class DataDirLock {
 public:
  // Creates data_dir if needed. Fails (FailedPrecondition) while another process holds the lock.
  static Result<std::unique_ptr<DataDirLock>> Acquire(const std::string& data_dir);
  ~DataDirLock();
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;

 private:
  explicit DataDirLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace det::agent
