#pragma once
// Launcher: starts a process group and reports its output and exit. ProcessLauncher runs real
// processes; testing/fake_launcher.h is the fake.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/warm_python.h"
#include "common/status.h"

namespace det::agent {

enum class StdType { kStdout, kStderr };

inline const char* StdTypeName(StdType t) { return t == StdType::kStdout ? "stdout" : "stderr"; }

struct LaunchSpec {
  std::vector<std::string> argv;  // argv[0] without '/' is looked up on env's PATH
  std::map<std::string, std::string> env;
  std::string cwd;
  // Open descriptors the process gets as fds 3, 4, ... (the caller keeps and closes its own).
  std::vector<int> extra_fds;
  // Set when argv runs a python entrypoint that a warm interpreter can start (warm_python.h);
  // launchers without one run argv.
  std::optional<WarmPythonPlan> warm;
  // Set when argv runs a container client (`podman run --name <container> ...`): signals go to
  // the container by this name (ContainerLauncher).
  std::string container;
};

// Receives raw output chunks, from one thread at a time, never after Wait() returned.
using OutputCallback = std::function<void(StdType, std::string_view)>;

// A started process group. Destroying it kills the group if it is still running.
class Process {
 public:
  virtual ~Process() = default;
  virtual int pid() const = 0;
  // Delivers `signo` to the whole process group; a no-op once the group is gone.
  virtual Status Signal(int signo) = 0;
  // Blocks until the process exited and its output was delivered; returns the exit status, or
  // 128+N when it was killed by signal N.
  virtual int Wait() = 0;
};

class Launcher {
 public:
  virtual ~Launcher() = default;
  // Starts spec.argv in a new session/process group with stdin from /dev/null. Fails when the
  // program cannot be executed (exit codes are for things that ran).
  virtual Result<std::unique_ptr<Process>> Launch(const LaunchSpec& spec,
                                                  OutputCallback on_output) = 0;
  // Called once by the agent before the first Launch, after it cleaned up what a previous run
  // left (a launcher may start helper processes here).
  virtual void Start() {}
};

// "SIGTERM", "TERM", "sigterm" or "15" -> 15.
Result<int> ParseSignal(const std::string& name);

}  // namespace det::agent
