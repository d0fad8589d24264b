#include "agent/detect/container_runtime.h"

namespace det::agent {

Result<std::string> ChooseContainerRuntime(const std::string& wanted, const RuntimeProbe& probe) {
  if (wanted == "none") return std::string();
  auto docker_ok = [&] { return probe({"docker", "info", "--format", "{{.ServerVersion}}"}) == 0; };
  auto podman_ok = [&] { return probe({"podman", "--version"}) == 0; };
  if (wanted == "docker") {
    if (docker_ok()) return std::string("docker");
    return FailedPrecondition("--container-runtime docker: `docker info` fails (no docker engine)");
  }
  if (wanted == "podman") {
    if (podman_ok()) return std::string("podman");
    return FailedPrecondition("--container-runtime podman: `podman --version` fails");
  }
  if (wanted != "auto") {
    return InvalidArgument("--container-runtime: must be auto, podman, docker or none (got \"" +
                           wanted + "\")");
  }
  if (docker_ok()) return std::string("docker");
  if (podman_ok()) return std::string("podman");
  return std::string();
}

}  // namespace det::agent
