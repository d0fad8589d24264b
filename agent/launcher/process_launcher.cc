#include "agent/launcher/process_launcher.h"

#include <fcntl.h>
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
#include <sstream>
#include <thread>

namespace det::agent {
namespace {

// How long output is still read after the leader exited and the group was killed (a process
// that left the group may hold the pipes open).
constexpr auto kDrainAfterExit = std::chrono::seconds(2);

std::string ErrnoText(int err) { return std::strerror(err); }

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

std::string ResolveProgram(const std::string& name, const std::map<std::string, std::string>& env) {
  if (name.find('/') != std::string::npos) return name;
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  if (auto it = env.find("PATH"); it != env.end()) path = it->second;
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;  // execve will fail with ENOENT
}

int DecodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 255;
}

class UnixProcess : public Process {
 public:
  UnixProcess(pid_t pid, int out_fd, int err_fd, OutputCallback on_output)
      : pid_(pid), on_output_(std::move(on_output)) {
    fds_[0] = out_fd;
    fds_[1] = err_fd;
    pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    thread_ = std::thread([this] { Supervise(); });
  }

  ~UnixProcess() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!group_gone_) kill(-pid_, SIGKILL);
    }
    if (thread_.joinable()) thread_.join();
    if (pidfd_ >= 0) close(pidfd_);
  }

  int pid() const override { return pid_; }

  Status Signal(int signo) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (group_gone_) return Status::Ok();
    if (kill(-pid_, signo) != 0 && errno != ESRCH) {
      return Internal("signal " + std::to_string(signo) + " to process group " +
                      std::to_string(pid_) + ": " + ErrnoText(errno));
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
    int status = 0;
    pid_t r;
    do {
      r = waitpid(pid_, &status, block ? 0 : WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r != pid_) return false;
    *exit_code = DecodeWaitStatus(status);
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
      } else if (pidfd_ >= 0) {
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
      if (!exited && pidfd_ >= 0) pfds[n++] = {pidfd_, POLLIN, 0};
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
  OutputCallback on_output_;
  int fds_[2];
  int pidfd_ = -1;
  std::thread thread_;

  std::mutex mu_;
  std::condition_variable done_cv_;
  bool group_gone_ = false;  // guarded by mu_
  bool done_ = false;        // guarded by mu_
  int exit_code_ = 0;        // guarded by mu_
};

}  // namespace

Result<std::unique_ptr<Process>> ProcessLauncher::Launch(const LaunchSpec& spec,
                                                         OutputCallback on_output) {
  if (spec.argv.empty()) return InvalidArgument("empty argv");
  // Everything the child needs is prepared before fork: only async-signal-safe calls follow.
  std::string program = ResolveProgram(spec.argv[0], spec.env);
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : spec.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();

  int out_pipe[2], err_pipe[2], exec_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return Internal("pipe: " + ErrnoText(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return Internal("pipe: " + ErrnoText(errno));
  }
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    return Internal("pipe: " + ErrnoText(errno));
  }
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);

  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], exec_pipe[0], exec_pipe[1],
                   devnull}) {
      if (fd >= 0) close(fd);
    }
    return Internal("fork: " + ErrnoText(err));
  }
  if (pid == 0) {
    // Child.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2}) {
      sigaction(s, &dfl, nullptr);
    }
    setsid();
    int stage_and_errno[2] = {0, 0};
    if ((devnull >= 0 && dup2(devnull, 0) < 0) || dup2(out_pipe[1], 1) < 0 ||
        dup2(err_pipe[1], 2) < 0) {
      stage_and_errno[0] = 1;
    } else if (cwd != nullptr && chdir(cwd) != 0) {
      stage_and_errno[0] = 2;
    } else {
      execve(program.c_str(), argv.data(), envp.data());
      stage_and_errno[0] = 3;
    }
    stage_and_errno[1] = errno;
    ssize_t ignored = write(exec_pipe[1], stage_and_errno, sizeof(stage_and_errno));
    (void)ignored;
    _exit(127);
  }

  // Parent.
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(exec_pipe[1]);
  if (devnull >= 0) close(devnull);
  int stage_and_errno[2] = {0, 0};
  ssize_t got;
  do {
    got = read(exec_pipe[0], stage_and_errno, sizeof(stage_and_errno));
  } while (got < 0 && errno == EINTR);
  close(exec_pipe[0]);
  if (got > 0) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    close(out_pipe[0]);
    close(err_pipe[0]);
    std::string what = stage_and_errno[0] == 2   ? "chdir " + spec.cwd
                       : stage_and_errno[0] == 3 ? "exec " + spec.argv[0]
                                                 : std::string("redirect stdio");
    return Internal(what + ": " + ErrnoText(stage_and_errno[1]));
  }
  return std::unique_ptr<Process>(
      std::make_unique<UnixProcess>(pid, out_pipe[0], err_pipe[0], std::move(on_output)));
}

}  // namespace det::agent
