#pragma once
// Zygote: the agent's side of harness/determined/exec/zygote.py, a Python interpreter started
// once with `determined` (and the --warm-python-preload modules) imported, that forks each warm
// trial. One control socket (SOCK_SEQPACKET, a JSON message per packet, the trial's stdio passed
// as SCM_RIGHTS) and one reader thread; the protocol is described in zygote.py.

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/launcher/launcher.h"

namespace det::agent {

struct ZygoteOptions {
  // The interpreter (absolute, or looked up on env's PATH).
  std::string python = "/usr/bin/python3";
  // The zygote's environment: what every trial gets before its own variables.
  std::map<std::string, std::string> env;
  std::string cwd;
  std::vector<std::string> preload = {"determined"};
  // How long a spawn waits for the zygote's answer before the zygote is taken for broken.
  std::chrono::milliseconds spawn_timeout{10000};
};

class ZygoteWatch;

class Zygote {
 public:
  // `starter` launches the zygote process itself (a cold ProcessLauncher); not owned.
  Zygote(ZygoteOptions options, Launcher* starter);
  // Kills the zygote; its children die with it (PR_SET_PDEATHSIG) and are reported killed.
  ~Zygote();
  Zygote(const Zygote&) = delete;
  Zygote& operator=(const Zygote&) = delete;

  // Starts the process; it says ready once its imports are done (ready()).
  Status Start();
  bool ready();
  // False once the zygote exited or broke; a new Zygote is needed then.
  bool alive();
  // Waits until ready, dead or `deadline`.
  bool WaitReady(std::chrono::steady_clock::time_point deadline);
  // The zygote's pid once ready (0 before).
  int pid();
  const ZygoteOptions& options() const { return options_; }

  // Forks a child that runs `plan` with spec.env and spec.cwd as `executable` would. Fails
  // (and nothing runs) when the zygote is not ready or does not answer.
  Result<std::unique_ptr<Process>> Spawn(const LaunchSpec& spec, const WarmPythonPlan& plan,
                                         const std::string& executable, OutputCallback on_output);

 private:
  struct Pending {
    bool answered = false;
    int pid = 0;
    std::string error;
    std::shared_ptr<ZygoteWatch> watch;
  };

  void ReadLoop();
  void Handle(const std::string& message);
  // Marks the zygote dead, fails pending spawns and reports its live children killed.
  void Die(const std::string& why);

  const ZygoteOptions options_;
  Launcher* const starter_;
  int fd_ = -1;  // our end of the control socket
  std::unique_ptr<Process> process_;
  std::thread reader_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool ready_ = false;                                    // guarded by mu_
  bool dead_ = false;                                     // guarded by mu_
  int pid_ = 0;                                           // guarded by mu_
  int64_t next_id_ = 1;                                   // guarded by mu_
  std::map<int64_t, Pending> pending_;                    // guarded by mu_
  std::map<int, std::shared_ptr<ZygoteWatch>> children_;  // guarded by mu_; by pid
};

}  // namespace det::agent
