#pragma once
// DataDirLock: the data dir belongs to one master. An exclusive flock on <data dir>/master.lock,
// taken before the store is opened and held for the process lifetime; the file names the holder
// (pid and host) so a second master's error can say who has it. The kernel drops the lock when
// the holder exits, however it exits, so a crash leaves nothing to clean up.

#include <memory>
#include <string>

#include "common/status.h"

namespace det::master::server {

inline constexpr char kDataDirLockFile[] = "master.lock";

class DataDirLock {
 public:
  // FailedPrecondition naming the holder's pid and host when another process holds the lock.
  static Result<std::unique_ptr<DataDirLock>> Acquire(const std::string& data_dir);
  ~DataDirLock();
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  DataDirLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
};

}  // namespace det::master::server
