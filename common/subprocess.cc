#include "common/subprocess.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace det {

Result<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                 const std::map<std::string, std::string>& env) {
  if (argv.empty()) return InvalidArgument("argv: must not be empty");
  int out[2];
  if (pipe(out) != 0) return Internal(std::string("pipe: ") + strerror(errno));
  pid_t pid = fork();
  if (pid < 0) {
    close(out[0]);
    close(out[1]);
    return Internal(std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    // Inherit nothing else: a listening socket or database handed to a child would outlive a
    // crash of this process and keep its port or locks.
    for (int fd = 3; fd < 65536; ++fd) close(fd);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  ProcessResult result;
  char buf[4096];
  while (true) {
    ssize_t n = read(out[0], buf, sizeof(buf));
    if (n > 0) {
      result.stdout_text.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (result.exit_code == 127) return Unavailable("cannot run " + argv[0]);
  return result;
}

}  // namespace det
