#include "agent/launcher/supervised_process.h"

#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <mutex>
#include <thread>

namespace det::agent {
namespace {

// How long output is still read after the leader exited and the group was killed (a process
// that left the group may hold the pipes open).
constexpr auto kDrainAfterExit = std::chrono::seconds(2);

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

class ChildWatch : public ExitWatch {
 public:
  explicit ChildWatch(pid_t pid)
      : pid_(pid), pidfd_(static_cast<int>(syscall(SYS_pidfd_open, pid, 0))) {}
  ~ChildWatch() override {
    if (pidfd_ >= 0) close(pidfd_);
  }
  int fd() const override { return pidfd_; }
  std::optional<int> Reap(bool block) override {
    int status = 0;
    pid_t r;
    do {
      r = waitpid(pid_, &status, block ? 0 : WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r != pid_) return std::nullopt;
    return status;
  }

 private:
  const pid_t pid_;
  const int pidfd_;
};

class SupervisedProcess : public Process {
 public:
  SupervisedProcess(pid_t pid, int out_fd, int err_fd, std::unique_ptr<ExitWatch> watch,
                    OutputCallback on_output)
      : pid_(pid), watch_(std::move(watch)), on_output_(std::move(on_output)) {
    fds_[0] = out_fd;
    fds_[1] = err_fd;
    thread_ = std::thread([this] { Supervise(); });
  }

  ~SupervisedProcess() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!group_gone_) kill(-pid_, SIGKILL);
    }
    if (thread_.joinable()) thread_.join();
  }

  int pid() const override { return pid_; }

  Status Signal(int signo) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (group_gone_) return Status::Ok();
    if (kill(-pid_, signo) != 0 && errno != ESRCH) {
      return Internal("signal " + std::to_string(signo) + " to process group " +
                      std::to_string(pid_) + ": " + std::strerror(errno));
    }
    return Status::Ok();
  }

  int Wait() override {
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [this] { return done_; });
    return exit_code_;
  }

 private:
  // Reaps the leader (non-blocking unless `block`); on exit kills what is left of the group.
  bool TryReap(bool block, int* exit_code) {
    std::optional<int> status = watch_->Reap(block);
    if (!status) return false;
    *exit_code = DecodeWaitStatus(*status);
    std::lock_guard<std::mutex> lock(mu_);
    kill(-pid_, SIGKILL);  // the group id stays reserved while any member is alive
    group_gone_ = true;
    return true;
  }

  void Supervise() {
    int exit_code = 0;
    bool exited = false;
    std::chrono::steady_clock::time_point drain_deadline;
    char buf[65536];
    const int watch_fd = watch_->fd();
    while (true) {
      if (!exited && TryReap(false, &exit_code)) {
        exited = true;
        drain_deadline = std::chrono::steady_clock::now() + kDrainAfterExit;
      }
      bool pipes_open = fds_[0] >= 0 || fds_[1] >= 0;
      if (!pipes_open) {
        if (!exited) TryReap(true, &exit_code);
        break;
      }
      int timeout_ms = 50;
      if (exited) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            drain_deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        timeout_ms = static_cast<int>(left.count());
      } else if (watch_fd >= 0) {
        timeout_ms = -1;
      }
      pollfd pfds[3];
      int n = 0;
      int index_of[3] = {-1, -1, -1};
      for (int i = 0; i < 2; ++i) {
        if (fds_[i] >= 0) {
          pfds[n] = {fds_[i], POLLIN, 0};
          index_of[n++] = i;
        }
      }
      if (!exited && watch_fd >= 0) pfds[n++] = {watch_fd, POLLIN, 0};
      int r = poll(pfds, n, timeout_ms);
      if (r < 0) {
        if (errno == EINTR) continue;
        break;
      }
      for (int k = 0; k < n; ++k) {
        if (index_of[k] < 0 || pfds[k].revents == 0) continue;
        int i = index_of[k];
        ssize_t got = read(fds_[i], buf, sizeof(buf));
        if (got > 0) {
          if (on_output_) {
            on_output_(i == 0 ? StdType::kStdout : StdType::kStderr,
                       std::string_view(buf, static_cast<size_t>(got)));
          }
        } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
          CloseFd(fds_[i]);
        }
      }
    }
    CloseFd(fds_[0]);
    CloseFd(fds_[1]);
    std::lock_guard<std::mutex> lock(mu_);
    exit_code_ = exit_code;
    done_ = true;
    done_cv_.notify_all();
  }

  const pid_t pid_;
  std::unique_ptr<ExitWatch> watch_;
  OutputCallback on_output_;
  int fds_[2];
  std::thread thread_;

  std::mutex mu_;
  std::condition_variable done_cv_;
  bool group_gone_ = false;  // guarded by mu_
  bool done_ = false;        // guarded by mu_
  int exit_code_ = 0;        // guarded by mu_
};

}  // namespace

std::unique_ptr<ExitWatch> ChildExitWatch(pid_t pid) { return std::make_unique<ChildWatch>(pid); }

std::unique_ptr<Process> SuperviseProcess(pid_t pid, int out_fd, int err_fd,
                                          std::unique_ptr<ExitWatch> watch,
                                          OutputCallback on_output) {
  return std::make_unique<SupervisedProcess>(pid, out_fd, err_fd, std::move(watch),
                                             std::move(on_output));
}

int DecodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 255;
}

}  // namespace det::agent
