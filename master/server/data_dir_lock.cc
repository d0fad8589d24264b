#include "master/server/data_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace det::master::server {
namespace {

std::string HostName() {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0) return "";
  return host;
}

// "pid 123 on host h" from the holder's lock file; the holder may not have written it yet.
std::string DescribeHolder(int fd) {
  std::string text;
  char buf[512];
  ssize_t n;
  off_t at = 0;
  while ((n = pread(fd, buf, sizeof(buf), at)) > 0 && text.size() < 4096) {
    text.append(buf, static_cast<size_t>(n));
    at += n;
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("pid") || !j["pid"].is_number_integer()) {
    return "pid unknown";
  }
  std::string out = "pid " + std::to_string(j["pid"].get<int64_t>());
  if (j.contains("host") && j["host"].is_string() && !j["host"].get<std::string>().empty()) {
    out += " on host " + j["host"].get<std::string>();
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<DataDirLock>> DataDirLock::Acquire(const std::string& data_dir) {
  std::string path = (std::filesystem::path(data_dir) / kDataDirLockFile).string();
  // O_CLOEXEC: children the master starts (agents, Slurm jobs) must not inherit the lock.
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Internal("cannot open the data dir lock " + path + ": " + std::strerror(errno));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    std::string holder = err == EWOULDBLOCK ? DescribeHolder(fd) : "";
    close(fd);
    if (err != EWOULDBLOCK) {
      return Internal("cannot lock the data dir lock " + path + ": " + std::strerror(err));
    }
    return FailedPrecondition("data dir " + data_dir + " is in use by another determined-master (" +
                              holder + ", lock " + path +
                              "); a data dir serves one master: stop that master first or use "
                              "another --data-dir");
  }
  nlohmann::json who = {{"pid", static_cast<int64_t>(getpid())}, {"host", HostName()}};
  std::string text = who.dump() + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, text.data(), text.size(), 0) !=
                                   static_cast<ssize_t>(text.size())) {
    int err = errno;
    close(fd);
    return Internal("cannot write the data dir lock " + path + ": " + std::strerror(err));
  }
  return std::unique_ptr<DataDirLock>(new DataDirLock(fd, path));
}

DataDirLock::~DataDirLock() {
  // The file stays: removing it would let a third master lock a new file while a second one
  // still waits on the old one's inode.
  close(fd_);
}

}  // namespace det::master::server
