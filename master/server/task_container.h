#pragma once
// Where a task's image and bind_mounts take effect (commands, notebooks, shells, TensorBoards).
//
// - environment.image other than the built-in default: the task runs in that image, as a trial
//   does (ContainerSpecFor: the start command's `container`), its bind_mounts mounted.
// - the built-in default: the task is a process on the agent and sees the agent's files at
//   their own paths. What a Determined user expects of a mount is then met where it can be
//   without touching the agent host: a relative container_path (Determined: relative to the
//   working directory) becomes a symbolic link there to host_path, an absolute container_path
//   equal to host_path is already in place, and an absolute one elsewhere is named in the
//   task's log as not applied (making it would change the host's file system). read_only is
//   not enforced on a link.
// A relative container_path in a container is mounted at host_path and linked the same way
// (the container runtime takes absolute paths only). Pure: no I/O.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace det::master::server {

struct TaskMounts {
  std::optional<nlohmann::json> container;  // the start command's `container`; none: a process
  // (relative path in the working directory, host path): links made before the entrypoint.
  std::vector<std::pair<std::string, std::string>> links;
  std::vector<std::string> notes;  // log lines: mounts a process cannot apply
};

// `config`: the task's defaulted config; `device`: the slot type of its agent (cpu, cuda,
// rocm). Errors name the field (bind_mounts[0].host_path: must be an absolute path ...).
Result<TaskMounts> PlanTaskMounts(const nlohmann::json& config, const std::string& device);

// /bin/sh lines that make `links` (parent directories too; an existing link is replaced),
// each followed by " && ", or "" when there are none.
std::string LinkCommands(const std::vector<std::pair<std::string, std::string>>& links);

}  // namespace det::master::server
