#include "agent/launcher/zygote.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <nlohmann/json.hpp>

#include "agent/launcher/supervised_process.h"

namespace det::agent {

// The exit of a zygote child, delivered by the reader thread; an eventfd wakes the supervisor.
class ZygoteWatch {
 public:
  ZygoteWatch() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  ~ZygoteWatch() {
    if (fd_ >= 0) close(fd_);
  }
  int fd() const { return fd_; }
  void Complete(int status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_) return;
    status_ = status;
    uint64_t one = 1;
    if (fd_ >= 0 && write(fd_, &one, sizeof(one)) < 0) {
      // The supervisor still polls every 50 ms without the eventfd.
    }
    cv_.notify_all();
  }
  std::optional<int> Reap(bool block) {
    std::unique_lock<std::mutex> lock(mu_);
    if (block) cv_.wait(lock, [this] { return status_.has_value(); });
    return status_;
  }

 private:
  const int fd_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<int> status_;
};

namespace {

class SharedWatch : public ExitWatch {
 public:
  explicit SharedWatch(std::shared_ptr<ZygoteWatch> watch) : watch_(std::move(watch)) {}
  int fd() const override { return watch_->fd(); }
  std::optional<int> Reap(bool block) override { return watch_->Reap(block); }

 private:
  std::shared_ptr<ZygoteWatch> watch_;
};

void CloseAll(std::initializer_list<int> fds) {
  for (int fd : fds) {
    if (fd >= 0) close(fd);
  }
}

std::string Join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : sep) + item;
  return out;
}

}  // namespace

Zygote::Zygote(ZygoteOptions options, Launcher* starter)
    : options_(std::move(options)), starter_(starter) {}

Zygote::~Zygote() {
  process_.reset();  // SIGKILL to the zygote's group, joins its output thread
  if (fd_ >= 0) shutdown(fd_, SHUT_RDWR);
  if (reader_.joinable()) reader_.join();
  if (fd_ >= 0) close(fd_);
}

Status Zygote::Start() {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    return Internal(std::string("zygote socketpair: ") + std::strerror(errno));
  }
  LaunchSpec spec;
  spec.argv = {options_.python, "-m", "determined.exec.zygote", "--preload",
               Join(options_.preload, ",")};
  spec.env = options_.env;
  spec.cwd = options_.cwd;
  spec.extra_fds = {sv[1]};
  auto launched = starter_->Launch(spec, [](StdType, std::string_view data) {
    std::string_view text = data;
    while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    if (!text.empty()) spdlog::info("warm python: {}", text);
  });
  close(sv[1]);
  if (!launched.ok()) {
    close(sv[0]);
    return launched.status();
  }
  process_ = std::move(launched).value();
  fd_ = sv[0];
  reader_ = std::thread([this] { ReadLoop(); });
  return Status::Ok();
}

bool Zygote::ready() {
  std::lock_guard<std::mutex> lock(mu_);
  return ready_ && !dead_;
}

bool Zygote::alive() {
  std::lock_guard<std::mutex> lock(mu_);
  return !dead_;
}

bool Zygote::WaitReady(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_until(lock, deadline, [this] { return ready_ || dead_; });
  return ready_ && !dead_;
}

int Zygote::pid() {
  std::lock_guard<std::mutex> lock(mu_);
  return pid_;
}

void Zygote::ReadLoop() {
  std::vector<char> buf(1 << 16);
  while (true) {
    ssize_t got = recv(fd_, buf.data(), buf.size(), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      Die(got == 0 ? "the zygote exited" : std::string("zygote socket: ") + std::strerror(errno));
      return;
    }
    Handle(std::string(buf.data(), static_cast<size_t>(got)));
  }
}

void Zygote::Handle(const std::string& message) {
  nlohmann::json msg = nlohmann::json::parse(message, nullptr, false);
  if (!msg.is_object() || !msg.contains("op") || !msg["op"].is_string()) {
    spdlog::warn("warm python: ignoring a malformed message");
    return;
  }
  const std::string op = msg["op"];
  std::lock_guard<std::mutex> lock(mu_);
  if (op == "ready") {
    ready_ = true;
    pid_ = msg.value("pid", 0);
    std::string failed;
    if (msg.contains("failed") && msg["failed"].is_object()) {
      for (const auto& [name, why] : msg["failed"].items()) {
        failed += " " + name + " (" + (why.is_string() ? why.get<std::string>() : "") + ")";
      }
    }
    spdlog::info("warm python ready (pid {}, preloaded {}){}", pid_,
                 msg.value("preloaded", nlohmann::json::array()).dump(),
                 failed.empty() ? "" : "; could not preload:" + failed);
  } else if (op == "spawned" || op == "error") {
    auto it = pending_.find(msg.value("id", int64_t{0}));
    if (it == pending_.end()) return;
    it->second.answered = true;
    if (op == "spawned") {
      it->second.pid = msg.value("pid", 0);
      it->second.watch = std::make_shared<ZygoteWatch>();
      children_[it->second.pid] = it->second.watch;
    } else {
      it->second.error = msg.value("message", std::string("zygote error"));
    }
  } else if (op == "exited") {
    auto it = children_.find(msg.value("pid", 0));
    if (it == children_.end()) return;
    it->second->Complete(msg.value("status", 0));
    children_.erase(it);
  }
  cv_.notify_all();
}

void Zygote::Die(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!dead_) spdlog::warn("warm python (pid {}): {}", pid_, why);
  dead_ = true;
  for (auto& [id, p] : pending_) {
    if (!p.answered) {
      p.answered = true;
      p.error = why;
    }
  }
  // Children die with the zygote (PR_SET_PDEATHSIG); make sure of it, and report them killed.
  for (auto& [child, watch] : children_) {
    kill(-child, SIGKILL);
    watch->Complete(SIGKILL);  // a wait status: killed by SIGKILL
  }
  children_.clear();
  cv_.notify_all();
}

Result<std::unique_ptr<Process>> Zygote::Spawn(const LaunchSpec& spec, const WarmPythonPlan& plan,
                                               const std::string& executable,
                                               OutputCallback on_output) {
  nlohmann::json request = {{"op", "spawn"},     {"executable", executable}, {"argv", plan.argv},
                            {"args", plan.args}, {"env", spec.env},          {"cwd", spec.cwd}};
  if (!plan.module.empty()) {
    request["module"] = plan.module;
  } else {
    request["script"] = plan.script;
  }
  int64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ready_ || dead_) return Unavailable("the warm python is not ready");
    id = next_id_++;
    pending_[id] = Pending{};
  }
  request["id"] = id;
  std::string payload = request.dump();

  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0 || pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    int err = errno;
    CloseAll({devnull, out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]});
    std::lock_guard<std::mutex> lock(mu_);
    pending_.erase(id);
    return Internal(std::string("pipes for a warm start: ") + std::strerror(err));
  }
  int fds[3] = {devnull, out_pipe[1], err_pipe[1]};
  iovec iov{payload.data(), payload.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(fds))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(fds));
  std::memcpy(CMSG_DATA(cmsg), fds, sizeof(fds));
  ssize_t sent;
  do {
    sent = sendmsg(fd_, &msg, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  int send_errno = errno;
  CloseAll({devnull, out_pipe[1], err_pipe[1]});  // the zygote holds its own copies now

  std::unique_lock<std::mutex> lock(mu_);
  Pending answer;
  if (sent < 0) {
    answer.error = std::string("send to the warm python: ") + std::strerror(send_errno);
  } else if (!cv_.wait_for(lock, options_.spawn_timeout, [&] { return pending_[id].answered; })) {
    answer.error = "the warm python did not answer a spawn within " +
                   std::to_string(options_.spawn_timeout.count()) + " ms";
    lock.unlock();
    spdlog::error("{}; killing it", answer.error);
    if (process_) (void)process_->Signal(SIGKILL);  // its children die with it
    lock.lock();
  } else {
    answer = pending_[id];
  }
  pending_.erase(id);
  lock.unlock();
  if (!answer.error.empty() || answer.pid <= 0) {
    CloseAll({out_pipe[0], err_pipe[0]});
    return Unavailable(answer.error.empty() ? "the warm python gave no pid" : answer.error);
  }
  return SuperviseProcess(answer.pid, out_pipe[0], err_pipe[0],
                          std::make_unique<SharedWatch>(answer.watch), std::move(on_output));
}

}  // namespace det::agent
