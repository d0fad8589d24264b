#include "common/spawn_detached.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace det {

Result<pid_t> SpawnDetached(const std::vector<std::string>& argv, const std::string& log_path) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + strerror(errno));
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);

  pid_t child = fork();
  if (child < 0) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return Internal(std::string("fork: ") + strerror(errno));
  }
  if (child == 0) {
    // First child: a new session, then fork the daemon and report its pid.
    close(pipe_fds[0]);
    setsid();
    pid_t grandchild = fork();
    if (grandchild < 0) _exit(1);
    if (grandchild > 0) {
      int64_t pid64 = grandchild;
      ssize_t n = write(pipe_fds[1], &pid64, sizeof(pid64));
      (void)n;
      _exit(0);
    }
    setpgid(0, 0);  // its own group, so a stop can signal everything it started
    // A master blocks SIGTERM/SIGINT for its sigwait thread; what it starts begins clean.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGHUP, SIG_IGN);
    int devnull = open("/dev/null", O_RDONLY);
    int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (devnull < 0 || log < 0) {
      int32_t err = errno;
      ssize_t n = write(pipe_fds[1], &err, sizeof(err));
      (void)n;
      _exit(127);
    }
    dup2(devnull, STDIN_FILENO);
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    // Close everything else except the status pipe (close-on-exec).
    for (int fd = 3; fd < 4096; ++fd) {
      if (fd != pipe_fds[1]) close(fd);
    }
    execv(cargv[0], cargv.data());
    int32_t err = errno;
    ssize_t n = write(pipe_fds[1], &err, sizeof(err));
    (void)n;
    _exit(127);
  }
  close(pipe_fds[1]);
  std::string data;
  char buf[64];
  while (true) {
    ssize_t n = read(pipe_fds[0], buf, sizeof(buf));
    if (n > 0) {
      data.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  close(pipe_fds[0]);
  int wstatus = 0;
  waitpid(child, &wstatus, 0);
  if (data.size() < sizeof(int64_t)) return Internal("could not start " + argv[0]);
  int64_t pid64 = 0;
  std::memcpy(&pid64, data.data(), sizeof(pid64));
  if (data.size() >= sizeof(int64_t) + sizeof(int32_t)) {
    int32_t err = 0;
    std::memcpy(&err, data.data() + sizeof(int64_t), sizeof(err));
    return Internal("could not start " + argv[0] + ": " + strerror(err));
  }
  return static_cast<pid_t>(pid64);
}

}  // namespace det
