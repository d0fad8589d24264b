#pragma once
// ProcessLauncher: fork/exec in a new session (so the child leads its own process group), with
// stdout/stderr on pipes read by one supervisor thread per process.

#include "agent/launcher/launcher.h"

namespace det::agent {

class ProcessLauncher : public Launcher {
 public:
  Result<std::unique_ptr<Process>> Launch(const LaunchSpec& spec,
                                          OutputCallback on_output) override;
};

}  // namespace det::agent
