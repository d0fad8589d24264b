#include "common/data_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace det {
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

Result<std::unique_ptr<DataDirLock>> DataDirLock::Acquire(const std::string& data_dir,
                                                          const std::string& file_name,
                                                          const std::string& holder_kind,
                                                          const std::string& hint) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) return Internal("cannot create data dir " + data_dir + ": " + ec.message());
  std::string path = (std::filesystem::path(data_dir) / file_name).string();
  // O_CLOEXEC: a child (a trial, an agent the master starts) that inherited the descriptor would
  // keep the lock after its parent died.
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Internal("cannot open the data dir lock " + path + ": " + std::strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    std::string holder = err == EWOULDBLOCK ? DescribeHolder(fd) : "";
    close(fd);
    if (err != EWOULDBLOCK) {
      return Internal("cannot lock the data dir lock " + path + ": " + std::strerror(err));
    }
    return FailedPrecondition("data dir " + data_dir + " is in use by another " + holder_kind +
                              " (" + holder + ", lock " + path + ")" +
                              (hint.empty() ? "" : "; " + hint));
  }
  nlohmann::json who = {{"pid", static_cast<int64_t>(getpid())}, {"host", HostName()}};
  std::string text = who.dump() + "\n";
  if (ftruncate(fd, 0) != 0 ||
      pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
    int err = errno;
    close(fd);
    return Internal("cannot write the data dir lock " + path + ": " + std::strerror(err));
  }
  return std::unique_ptr<DataDirLock>(new DataDirLock(fd, path));
}

DataDirLock::~DataDirLock() {
  // The file stays: removing it would let a third process lock a new file while a second one
  // still holds the old one's inode.
  close(fd_);
}

}  // namespace det
