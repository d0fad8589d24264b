#pragma once
// ContainerLauncher: runs specs that name a container (LaunchSpec::container) as their container
// client process and everything else through the inner launcher. Signals reach the container via
// `<runtime> kill`, since the client does not forward them (--sig-proxy=false) and a SIGKILL of
// the client alone would leave the container running.

#include <map>
#include <memory>
#include <string>

#include "agent/launcher/launcher.h"

namespace det::agent {

class ContainerLauncher : public Launcher {
 public:
  // `runtime`: "podman" or "docker" (empty: no runtime; specs with a container are refused).
  // `data_dir`: this agent's data dir, whose label marks its containers.
  ContainerLauncher(std::unique_ptr<Launcher> inner, std::string runtime, std::string data_dir,
                    std::map<std::string, std::string> client_env);

  Result<std::unique_ptr<Process>> Launch(const LaunchSpec& spec,
                                          OutputCallback on_output) override;
  // Removes the containers a previous run of this agent left, then starts the inner launcher.
  void Start() override;

 private:
  std::unique_ptr<Launcher> inner_;
  std::unique_ptr<Launcher> helper_;  // runs kill/rm/ps
  const std::string runtime_;
  const std::string data_dir_;
  const std::map<std::string, std::string> client_env_;
};

}  // namespace det::agent
