#include "master/server/task_config.h"

#include <set>

namespace det::master::server {

using nlohmann::json;

namespace {

// The keys of Determined's command config; container-only ones (image, pod_spec, ...) are
// accepted under environment and ignored by the process runtime.
const std::set<std::string> kTopLevelKeys = {
    "description",  "entrypoint", "environment", "resources",        "bind_mounts",
    "idle_timeout", "work_dir",   "debug",       "tensorboard_args", "notebook_idle_type",
    "pbs",          "slurm",      "workspace",   "project",          "preemption_timeout"};
const std::set<std::string> kResourceKeys = {"slots",    "priority",  "resource_pool",
                                             "weight",   "max_slots", "is_single_node",
                                             "shm_size", "devices",   "agent_label"};

Status Bad(const std::string& field, const json& value, const std::string& rule) {
  return InvalidArgument(field + ": " + rule + " (got " + value.dump() + ")");
}

}  // namespace

const char* TaskTypeName(TaskType type) {
  switch (type) {
    case TaskType::kCommand:
      return "COMMAND";
    case TaskType::kNotebook:
      return "NOTEBOOK";
    case TaskType::kShell:
      return "SHELL";
    case TaskType::kTensorboard:
      return "TENSORBOARD";
  }
  return "COMMAND";
}

const char* TaskTypeTitle(TaskType type) {
  switch (type) {
    case TaskType::kCommand:
      return "Command";
    case TaskType::kNotebook:
      return "Notebook";
    case TaskType::kShell:
      return "Shell";
    case TaskType::kTensorboard:
      return "TensorBoard";
  }
  return "Command";
}

std::optional<TaskType> ParseTaskType(const std::string& name) {
  for (TaskType t :
       {TaskType::kCommand, TaskType::kNotebook, TaskType::kShell, TaskType::kTensorboard}) {
    if (name == TaskTypeName(t)) return t;
  }
  return std::nullopt;
}

Result<int64_t> ParseDurationSeconds(const json& value, const std::string& field) {
  if (value.is_number_integer()) {
    if (value.get<int64_t>() <= 0) return Bad(field, value, "must be a positive duration");
    return value.get<int64_t>();
  }
  if (!value.is_string()) return Bad(field, value, "must be a duration such as \"30m\"");
  std::string s = value.get<std::string>();
  size_t i = 0;
  while (i < s.size() && isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0) return Bad(field, value, "must be a duration such as \"30m\"");
  int64_t n = std::stoll(s.substr(0, i));
  std::string unit = s.substr(i);
  int64_t seconds;
  if (unit.empty() || unit == "s") {
    seconds = n;
  } else if (unit == "ms") {
    seconds = (n + 999) / 1000;
  } else if (unit == "m") {
    seconds = n * 60;
  } else if (unit == "h") {
    seconds = n * 3600;
  } else {
    return Bad(field, value, "unit must be one of ms, s, m, h");
  }
  if (seconds <= 0) return Bad(field, value, "must be a positive duration");
  return seconds;
}

Result<TaskConfig> ParseTaskConfig(TaskType type, const json& config,
                                   const std::string& default_description) {
  json c = config.is_null() ? json::object() : config;
  if (!c.is_object()) return Bad("config", c, "must be a mapping");
  for (const auto& [k, v] : c.items()) {
    if (!kTopLevelKeys.count(k)) {
      return InvalidArgument("config: unknown key '" + k + "' in a " +
                             std::string(TaskTypeTitle(type)) + " config");
    }
  }
  TaskConfig out;
  // Determined: TensorBoards take no slot by default, every other task one.
  out.slots = type == TaskType::kTensorboard ? 0 : 1;
  if (c.contains("resources") && !c["resources"].is_null()) {
    const json& r = c["resources"];
    if (!r.is_object()) return Bad("resources", r, "must be a mapping");
    for (const auto& [k, v] : r.items()) {
      if (!kResourceKeys.count(k)) return InvalidArgument("resources: unknown key '" + k + "'");
    }
    if (r.contains("slots") && !r["slots"].is_null()) {
      if (!r["slots"].is_number_integer() || r["slots"].get<int64_t>() < 0) {
        return Bad("resources.slots", r["slots"], "must be an integer >= 0");
      }
      out.slots = r["slots"].get<int64_t>();
    }
    if (r.contains("priority") && !r["priority"].is_null()) {
      const json& p = r["priority"];
      if (!p.is_number_integer() || p.get<int>() < 1 || p.get<int>() > 99) {
        return Bad("resources.priority", p, "must be an integer between 1 and 99");
      }
      out.priority = p.get<int>();
    }
    if (r.contains("resource_pool") && !r["resource_pool"].is_null()) {
      if (!r["resource_pool"].is_string()) {
        return Bad("resources.resource_pool", r["resource_pool"], "must be a string");
      }
      out.resource_pool = r["resource_pool"].get<std::string>();
    }
    if (r.contains("weight") && !r["weight"].is_null()) {
      if (!r["weight"].is_number() || r["weight"].get<double>() <= 0) {
        return Bad("resources.weight", r["weight"], "must be a number > 0");
      }
      out.weight = r["weight"].get<double>();
    }
  }
  if (c.contains("entrypoint") && !c["entrypoint"].is_null()) {
    const json& e = c["entrypoint"];
    if (e.is_string()) {
      if (e.get<std::string>().empty()) return Bad("entrypoint", e, "must not be empty");
    } else if (e.is_array()) {
      if (e.empty()) return Bad("entrypoint", e, "must not be an empty list");
      for (const auto& item : e) {
        if (!item.is_string()) return Bad("entrypoint", e, "list items must be strings");
      }
    } else {
      return Bad("entrypoint", e, "must be a string or a list of strings");
    }
    out.entrypoint = e;
  }
  if (type == TaskType::kCommand && out.entrypoint.is_null()) {
    return InvalidArgument("entrypoint: required for a command (e.g. det cmd run echo hi)");
  }
  if (c.contains("idle_timeout") && !c["idle_timeout"].is_null()) {
    DET_ASSIGN_OR_RETURN(out.idle_timeout_seconds,
                         ParseDurationSeconds(c["idle_timeout"], "idle_timeout"));
  }
  if (c.contains("bind_mounts") && !c["bind_mounts"].is_null()) {
    const json& b = c["bind_mounts"];
    if (!b.is_array()) return Bad("bind_mounts", b, "must be a list");
    for (const auto& m : b) {
      if (!m.is_object() || !m.contains("host_path") || !m["host_path"].is_string() ||
          !m.contains("container_path") || !m["container_path"].is_string()) {
        return Bad("bind_mounts", m, "each needs host_path and container_path strings");
      }
    }
  }
  if (c.contains("environment") && !c["environment"].is_null() && !c["environment"].is_object()) {
    return Bad("environment", c["environment"], "must be a mapping");
  }
  if (c.contains("work_dir") && !c["work_dir"].is_null()) {
    if (!c["work_dir"].is_string()) return Bad("work_dir", c["work_dir"], "must be a string");
    out.work_dir = c["work_dir"].get<std::string>();
  }
  if (c.contains("description") && !c["description"].is_null()) {
    if (!c["description"].is_string()) {
      return Bad("description", c["description"], "must be a string");
    }
    out.description = c["description"].get<std::string>();
  }
  if (out.description.empty()) out.description = default_description;
  c["description"] = out.description;
  json& res = c["resources"];
  if (!res.is_object()) res = json::object();
  res["slots"] = out.slots;
  if (out.priority) res["priority"] = *out.priority;
  if (!out.entrypoint.is_null()) c["entrypoint"] = out.entrypoint;
  out.defaulted = std::move(c);
  return out;
}

}  // namespace det::master::server
