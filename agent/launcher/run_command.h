#pragma once
// RunCommand: runs a short helper command (a container client's `kill`, `ps`, `rm`, `info`) to
// its end and returns its exit status and output.

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "agent/launcher/launcher.h"

namespace det::agent {

struct CommandResult {
  int exit_code = -1;  // -1: could not be started
  std::string output;  // stdout and stderr, as they came
};

// Kills the command (SIGKILL to its group) when it runs longer than `timeout`.
CommandResult RunCommand(Launcher& launcher, const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env,
                         std::chrono::milliseconds timeout);

}  // namespace det::agent
