#pragma once
// SupervisedProcess: a started process group, its stdout/stderr read from pipes by one thread.
// How the leader's exit is learned is an ExitWatch: waitpid for children of the agent
// (ProcessLauncher), a message from the zygote for warm starts (WarmLauncher).

#include <sys/types.h>

#include <memory>
#include <optional>

#include "agent/launcher/launcher.h"

namespace det::agent {

class ExitWatch {
 public:
  virtual ~ExitWatch() = default;
  // Becomes readable when the leader may have exited; -1: the supervisor polls every 50 ms.
  virtual int fd() const = 0;
  // The leader's raw wait status once it was reaped; nullopt while it runs (block=false).
  virtual std::optional<int> Reap(bool block) = 0;
};

// For a child of this process: a pidfd to wake up, waitpid to reap.
std::unique_ptr<ExitWatch> ChildExitWatch(pid_t pid);

// Takes ownership of the pipe read ends. Once the leader was reaped, what is left of its
// group is killed and the output still buffered is read (for up to 2 s).
std::unique_ptr<Process> SuperviseProcess(pid_t pid, int out_fd, int err_fd,
                                          std::unique_ptr<ExitWatch> watch,
                                          OutputCallback on_output);

// Exit status, or 128+N when killed by signal N.
int DecodeWaitStatus(int status);

}  // namespace det::agent
