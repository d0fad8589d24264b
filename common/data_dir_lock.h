#pragma once
// DataDirLock: a data dir belongs to one process of a kind (one master, one agent). An exclusive
// flock on <data dir>/<file>, taken before anything in the dir is read and held for the process
// lifetime; the file names the holder (pid and host) so a second process's error can say who has
// it. The kernel drops the lock when the holder exits, however it exits (kill -9 included), so a
// crash leaves nothing to clean up.

#include <memory>
#include <string>

#include "common/status.h"

namespace det {

class DataDirLock {
 public:
  // Creates data_dir if needed. FailedPrecondition naming the holder's pid and host when another
  // process holds the lock: "data dir D is in use by another <holder_kind> (pid P on host H, lock
  // F)" followed by "; <hint>" when a hint is given.
  static Result<std::unique_ptr<DataDirLock>> Acquire(const std::string& data_dir,
                                                      const std::string& file_name,
                                                      const std::string& holder_kind,
                                                      const std::string& hint = "");
  ~DataDirLock();
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  DataDirLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
};

}  // namespace det
