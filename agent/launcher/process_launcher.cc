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

#include "agent/launcher/supervised_process.h"

namespace det::agent {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

}  // namespace

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
  std::vector<int> extra = spec.extra_fds;

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
    int report_fd = exec_pipe[1];
    if ((devnull >= 0 && dup2(devnull, 0) < 0) || dup2(out_pipe[1], 1) < 0 ||
        dup2(err_pipe[1], 2) < 0) {
      stage_and_errno[0] = 1;
    }
    // spec.extra_fds become 3, 4, ...: they and the report pipe first move above those numbers
    // (so that placing one cannot overwrite another, and dup2 clears close-on-exec).
    const int high = 3 + static_cast<int>(extra.size());
    if (stage_and_errno[0] == 0 && !extra.empty()) {
      report_fd = fcntl(exec_pipe[1], F_DUPFD_CLOEXEC, high);
      if (report_fd < 0) report_fd = exec_pipe[1];
      for (size_t i = 0; i < extra.size() && stage_and_errno[0] == 0; ++i) {
        extra[i] = fcntl(extra[i], F_DUPFD_CLOEXEC, high);
        if (extra[i] < 0) stage_and_errno[0] = 1;
      }
      for (size_t i = 0; i < extra.size() && stage_and_errno[0] == 0; ++i) {
        if (dup2(extra[i], 3 + static_cast<int>(i)) < 0) stage_and_errno[0] = 1;
      }
    }
    if (stage_and_errno[0] != 0) {
    } else if (cwd != nullptr && chdir(cwd) != 0) {
      stage_and_errno[0] = 2;
    } else {
      execve(program.c_str(), argv.data(), envp.data());
      stage_and_errno[0] = 3;
    }
    stage_and_errno[1] = errno;
    ssize_t ignored = write(report_fd, stage_and_errno, sizeof(stage_and_errno));
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
  return SuperviseProcess(pid, out_pipe[0], err_pipe[0], ChildExitWatch(pid), std::move(on_output));
}

}  // namespace det::agent
