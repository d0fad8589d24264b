#pragma once
// The config of a command, notebook, shell or TensorBoard (Determined's command config:
// entrypoint, resources, environment, bind_mounts, idle_timeout, description, work_dir), checked
// and defaulted. Pure: no I/O.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/shell_quote.h"
#include "common/status.h"

namespace det::master::server {

enum class TaskType { kCommand, kNotebook, kShell, kTensorboard };

// COMMAND | NOTEBOOK | SHELL | TENSORBOARD (Determined's taskv1.TaskType without the prefix).
const char* TaskTypeName(TaskType type);
std::optional<TaskType> ParseTaskType(const std::string& name);
// "Command", "Notebook", ... for descriptions and messages.
const char* TaskTypeTitle(TaskType type);

struct TaskConfig {
  nlohmann::json defaulted;   // the config as stored and shown
  nlohmann::json entrypoint;  // string (run by a shell) or list (argv); null for built-ins
  int64_t slots = 1;
  std::optional<int> priority;
  std::string resource_pool;  // "" -> the default pool
  double weight = 1;
  std::optional<int64_t> idle_timeout_seconds;
  std::string description;
  std::string work_dir;
};

// Checks `config` (unknown keys, types, ranges) and fills in defaults; errors name the field,
// the value and the rule. `default_description` is used when none is given.
Result<TaskConfig> ParseTaskConfig(TaskType type, const nlohmann::json& config,
                                   const std::string& default_description);

// "30m", "90s", "1h", "500ms" or a number of seconds.
Result<int64_t> ParseDurationSeconds(const nlohmann::json& value, const std::string& field);

}  // namespace det::master::server
