#pragma once
// ProcessLauncher: fork/exec in a new session (so the child leads its own process group), with
// stdout/stderr on pipes read by one supervisor thread per process.

#include "agent/launcher/launcher.h"

namespace det::agent {

// `name` when it holds a '/', else the first executable `dir/name` on env's PATH (default
// /usr/local/bin:/usr/bin:/bin), else `name`.
std::string ResolveProgram(const std::string& name, const std::map<std::string, std::string>& env);

class ProcessLauncher : public Launcher {
 public:
  Result<std::unique_ptr<Process>> Launch(const LaunchSpec& spec,
                                          OutputCallback on_output) override;
};

}  // namespace det::agent
