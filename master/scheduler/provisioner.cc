#include "master/scheduler/provisioner.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace det::master::scheduler {

using nlohmann::json;

namespace {

std::string Path(std::string_view where, const std::string& key) {
  return std::string(where) + "." + key;
}

}  // namespace

Result<int64_t> ParseDurationMs(const json& value, std::string_view where) {
  std::string w(where);
  if (value.is_number()) {
    double s = value.get<double>();
    if (s < 0) return InvalidArgument(w + ": must not be negative (got " + value.dump() + ")");
    return static_cast<int64_t>(s * 1000);
  }
  if (!value.is_string()) {
    return InvalidArgument(w + ": must be a duration such as \"30s\", \"5m\" or \"1h\" (got " +
                           value.dump() + ")");
  }
  const std::string text = value.get<std::string>();
  auto bad = [&] {
    return InvalidArgument(w + ": must be a duration such as \"30s\", \"5m\" or \"1h\" (got \"" +
                           text + "\")");
  };
  if (text.empty()) return bad();
  int64_t total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
      ++i;
    if (i == start) return bad();
    double number = 0;
    try {
      number = std::stod(text.substr(start, i - start));
    } catch (...) {
      return bad();
    }
    size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string unit = text.substr(unit_start, i - unit_start);
    double ms_per = 0;
    if (unit == "ms")
      ms_per = 1;
    else if (unit == "s" || unit.empty())
      ms_per = 1000;
    else if (unit == "m")
      ms_per = 60 * 1000;
    else if (unit == "h")
      ms_per = 3600 * 1000;
    else
      return bad();
    if (unit.empty() && i != text.size()) return bad();
    total += static_cast<int64_t>(number * ms_per);
  }
  return total;
}

Result<ProvisionerConfig> ParseProvisionerConfig(const json& j, std::string_view where) {
  std::string w(where);
  if (!j.is_object()) return InvalidArgument(w + ": must be an object");
  static const std::set<std::string> kKnown = {
      "type", "min_instances", "max_instances", "min_agents", "max_agents", "max_idle_agent_period",
      "max_agent_starting_period", "slots_per_agent",
      // Cloud providers' fields, accepted so that Determined configs load.
      "master_url", "master_cert_name", "startup_script", "container_startup_script",
      "agent_docker_network", "agent_docker_runtime", "agent_docker_image", "agent_fluent_image",
      "agent_reconnect_attempts", "agent_reconnect_backoff", "instance_type",
      "launch_error_timeout", "launch_error_retries", "region", "image_id", "root_volume_size",
      "ssh_key_name", "iam_instance_profile_arn", "network_interface", "tag_key", "tag_value",
      "custom_tags", "cpu_slots_allowed", "spot", "spot_max_price", "instance_name", "cluster_id",
      "project", "zone", "boot_disk_size", "boot_disk_source_image", "label_key", "label_value",
      "name_prefix", "network_tags", "service_account", "operation_timeout_period",
      "use_preemptible", "gpu_type", "gpu_num", "machine_type",
      // type slurm.
      "partition", "slot_type", "slurm_conf", "path", "agent_path", "job_storage_root"};
  for (const auto& [key, _] : j.items()) {
    if (!kKnown.count(key)) return InvalidArgument(Path(w, key) + ": unknown field");
  }
  ProvisionerConfig c;
  if (!j.contains("type") || !j["type"].is_string()) {
    return InvalidArgument(Path(w, "type") + ": required (local, slurm, aws or gcp)");
  }
  c.type = j["type"].get<std::string>();
  if (c.type != "local" && c.type != "slurm" && c.type != "aws" && c.type != "gcp") {
    return InvalidArgument(Path(w, "type") + ": must be local, slurm, aws or gcp (got \"" + c.type +
                           "\")");
  }
  static const std::set<std::string> kSlurmOnly = {"partition", "slot_type",  "slurm_conf",
                                                   "path",      "agent_path", "job_storage_root"};
  for (const auto& [key, v] : j.items()) {
    if (kSlurmOnly.count(key) && c.type != "slurm") {
      return InvalidArgument(Path(w, key) + ": only for type slurm (type is " + c.type + ")");
    }
    bool strings = kSlurmOnly.count(key) || (c.type == "slurm" && key == "master_url");
    if (strings && !v.is_string()) {
      return InvalidArgument(Path(w, key) + ": must be a string (got " + v.dump() + ")");
    }
  }
  if (c.type == "slurm") {
    c.slurm.partition = j.value("partition", "");
    c.slurm.slot_type = j.value("slot_type", "cpu");
    c.slurm.slurm_conf = j.value("slurm_conf", "");
    c.slurm.path = j.value("path", "");
    c.slurm.agent_path = j.value("agent_path", "");
    c.slurm.job_storage_root = j.value("job_storage_root", "");
    c.slurm.master_url = j.value("master_url", "");
    if (c.slurm.slot_type != "cpu" && c.slurm.slot_type != "cuda") {
      return InvalidArgument(Path(w, "slot_type") + ": must be cpu or cuda (got \"" +
                             c.slurm.slot_type + "\")");
    }
  }
  auto count = [&](const char* name, const char* alias, int* out) -> Status {
    for (const char* key : {name, alias}) {
      if (!j.contains(key) || j[key].is_null()) continue;
      if (!j[key].is_number_integer() || j[key].get<int64_t>() < 0 ||
          j[key].get<int64_t>() > 100000) {
        return InvalidArgument(Path(w, key) + ": must be an integer from 0 to 100000 (got " +
                               j[key].dump() + ")");
      }
      *out = static_cast<int>(j[key].get<int64_t>());
    }
    return Status::Ok();
  };
  DET_RETURN_IF_ERROR(count("min_instances", "min_agents", &c.min_instances));
  DET_RETURN_IF_ERROR(count("max_instances", "max_agents", &c.max_instances));
  if (c.min_instances > c.max_instances) {
    return InvalidArgument(Path(w, "min_instances") + ": must not exceed max_instances (" +
                           std::to_string(c.min_instances) + " > " +
                           std::to_string(c.max_instances) + ")");
  }
  if (j.contains("slots_per_agent")) {
    const json& v = j["slots_per_agent"];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1024) {
      return InvalidArgument(Path(w, "slots_per_agent") + ": must be an integer from 0 to 1024");
    }
    c.slots_per_agent = static_cast<int>(v.get<int64_t>());
  }
  if (j.contains("max_idle_agent_period")) {
    DET_ASSIGN_OR_RETURN(
        c.max_idle_agent_period_ms,
        ParseDurationMs(j["max_idle_agent_period"], Path(w, "max_idle_agent_period")));
  }
  if (j.contains("max_agent_starting_period")) {
    DET_ASSIGN_OR_RETURN(
        c.max_agent_starting_period_ms,
        ParseDurationMs(j["max_agent_starting_period"], Path(w, "max_agent_starting_period")));
  }
  return c;
}

ScalingDecision DecideScaling(const ProvisionerConfig& config, const ScalingInput& in) {
  ScalingDecision out;
  int starting = 0;
  int alive = 0;
  std::vector<const ProvisionedAgent*> idle;
  for (const ProvisionedAgent& a : in.agents) {
    if (!a.registered) {
      if (in.now_ms - a.launched_at_ms >= config.max_agent_starting_period_ms) {
        out.stop.push_back(a.id);  // rule 1
        continue;
      }
      ++starting;
    } else if (a.idle_since_ms && in.now_ms - *a.idle_since_ms >= config.max_idle_agent_period_ms) {
      idle.push_back(&a);
    }
    ++alive;
  }
  // Rule 2: agents for what waits, with the starting ones counted.
  int needed = 0;
  int uncovered = std::max(in.waiting_slots - in.free_slots, 0);
  if (uncovered > 0) {
    int per = std::max(config.slots_per_agent, 1);
    needed = (uncovered + per - 1) / per;
  } else if (in.waiting_slots == 0 && in.waiting_tasks > 0 && alive - starting == 0) {
    needed = 1;
  }
  int launch = std::max(needed - starting, 0);
  launch = std::max(launch, config.min_instances - alive);  // rule 3
  launch = std::min(launch, config.max_instances - alive);
  out.launch = std::max(launch, 0);
  // Rule 4.
  if (in.waiting_tasks == 0 && in.waiting_slots == 0) {
    std::sort(idle.begin(), idle.end(), [](const ProvisionedAgent* a, const ProvisionedAgent* b) {
      return *a->idle_since_ms < *b->idle_since_ms ||
             (*a->idle_since_ms == *b->idle_since_ms && a->id < b->id);
    });
    int can_stop = alive - config.min_instances;
    for (const ProvisionedAgent* a : idle) {
      if (can_stop <= 0) break;
      out.stop.push_back(a->id);
      --can_stop;
    }
  }
  return out;
}

}  // namespace det::master::scheduler
