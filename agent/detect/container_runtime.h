#pragma once
// Which container runtime this agent runs images with: docker when a docker engine answers,
// else podman when its client runs, else none. The decision is pure over a command runner, so
// tests give it canned answers.

#include <functional>
#include <string>
#include <vector>

#include "common/status.h"

namespace det::agent {

// Runs argv and returns its exit status (-1 when it could not start).
using RuntimeProbe = std::function<int(const std::vector<std::string>& argv)>;

// `wanted`: "auto", "podman", "docker" or "none". Returns the runtime's program name, or "" for
// none. auto: docker when `docker info` succeeds (a client without an engine does not count),
// else podman when `podman --version` succeeds. A named runtime that does not answer is an
// error naming it.
Result<std::string> ChooseContainerRuntime(const std::string& wanted, const RuntimeProbe& probe);

}  // namespace det::agent
