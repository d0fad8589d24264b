#include "master/scheduler/pool_config.h"

#include <set>

namespace det::master::scheduler {
namespace {

std::string Path(std::string_view where, std::string_view key) {
  return std::string(where) + "." + std::string(key);
}

Status CheckKeys(const nlohmann::json& j, std::string_view where,
                 const std::set<std::string>& allowed) {
  if (!j.is_object()) return InvalidArgument(std::string(where) + ": must be an object");
  for (const auto& [key, value] : j.items()) {
    if (!allowed.count(key)) {
      return InvalidArgument(std::string(where) + ": unknown key \"" + key + "\"");
    }
  }
  return Status::Ok();
}

Status ReadBool(const nlohmann::json& j, std::string_view where, const char* key, bool* out) {
  if (!j.contains(key) || j[key].is_null()) return Status::Ok();
  if (!j[key].is_boolean()) return InvalidArgument(Path(where, key) + ": must be a boolean");
  *out = j[key].get<bool>();
  return Status::Ok();
}

Status ReadPriority(const nlohmann::json& j, std::string_view where, int* out) {
  if (!j.contains("default_priority") || j["default_priority"].is_null()) return Status::Ok();
  const auto& v = j["default_priority"];
  std::string path = Path(where, "default_priority");
  if (!v.is_number_integer()) return InvalidArgument(path + ": must be an integer");
  int64_t p = v.get<int64_t>();
  if (p < kMinPriority || p > kMaxPriority) {
    return InvalidArgument(path + ": must be between 1 and 99, got " + std::to_string(p));
  }
  *out = static_cast<int>(p);
  return Status::Ok();
}

}  // namespace

const char* SchedulerTypeName(SchedulerType type) {
  return type == SchedulerType::kPriority ? "priority" : "fair_share";
}

const PoolConfig* ResourcePoolsConfig::Find(std::string_view pool_name) const {
  for (const PoolConfig& p : pools) {
    if (p.pool_name == pool_name) return &p;
  }
  return nullptr;
}

Result<SchedulerConfig> ParseSchedulerConfig(const nlohmann::json& j, std::string_view where,
                                             const SchedulerConfig& defaults) {
  DET_RETURN_IF_ERROR(CheckKeys(j, where,
                                {"type", "preemption", "default_priority", "fitting_policy",
                                 "allow_heterogeneous_fits", "priority", "fair_share",
                                 "round_robin"}));
  SchedulerConfig c = defaults;
  bool type_given = false;
  if (j.contains("type") && !j["type"].is_null()) {
    if (!j["type"].is_string()) return InvalidArgument(Path(where, "type") + ": must be a string");
    std::string t = j["type"].get<std::string>();
    if (t == "priority") {
      c.type = SchedulerType::kPriority;
    } else if (t == "fair_share") {
      c.type = SchedulerType::kFairShare;
    } else if (t == "round_robin") {
      return InvalidArgument(Path(where, "type") +
                             ": the round_robin scheduler is no longer supported; use priority "
                             "with equal priorities");
    } else {
      return InvalidArgument(Path(where, "type") + ": unknown scheduler type \"" + t +
                             "\" (expected priority or fair_share)");
    }
    type_given = true;
  }
  if (j.contains("round_robin")) {
    return InvalidArgument(Path(where, "round_robin") +
                           ": the round_robin scheduler is no longer supported; use priority "
                           "with equal priorities");
  }
  bool nested_priority = j.contains("priority") && !j["priority"].is_null();
  bool nested_fair = j.contains("fair_share") && !j["fair_share"].is_null();
  if (nested_priority && nested_fair) {
    return InvalidArgument(std::string(where) + ": only one of priority and fair_share may be set");
  }
  if (nested_priority) {
    if (type_given && c.type != SchedulerType::kPriority) {
      return InvalidArgument(Path(where, "priority") + ": given for a fair_share scheduler");
    }
    c.type = SchedulerType::kPriority;
    std::string sub = Path(where, "priority");
    DET_RETURN_IF_ERROR(CheckKeys(j["priority"], sub, {"preemption", "default_priority"}));
    DET_RETURN_IF_ERROR(ReadBool(j["priority"], sub, "preemption", &c.preemption));
    DET_RETURN_IF_ERROR(ReadPriority(j["priority"], sub, &c.default_priority));
  }
  if (nested_fair) {
    if (type_given && c.type != SchedulerType::kFairShare) {
      return InvalidArgument(Path(where, "fair_share") + ": given for a priority scheduler");
    }
    c.type = SchedulerType::kFairShare;
    DET_RETURN_IF_ERROR(CheckKeys(j["fair_share"], Path(where, "fair_share"), {}));
  }
  if (j.contains("preemption") && !j["preemption"].is_null() &&
      c.type != SchedulerType::kPriority) {
    return InvalidArgument(Path(where, "preemption") +
                           ": only applies to the priority scheduler (fair_share always preempts)");
  }
  if (j.contains("default_priority") && !j["default_priority"].is_null() &&
      c.type != SchedulerType::kPriority) {
    return InvalidArgument(Path(where, "default_priority") +
                           ": only applies to the priority scheduler");
  }
  DET_RETURN_IF_ERROR(ReadBool(j, where, "preemption", &c.preemption));
  DET_RETURN_IF_ERROR(ReadPriority(j, where, &c.default_priority));
  DET_RETURN_IF_ERROR(ReadBool(j, where, "allow_heterogeneous_fits", &c.allow_heterogeneous_fits));
  if (j.contains("fitting_policy") && !j["fitting_policy"].is_null()) {
    std::string path = Path(where, "fitting_policy");
    if (!j["fitting_policy"].is_string()) return InvalidArgument(path + ": must be a string");
    std::string f = j["fitting_policy"].get<std::string>();
    if (f == "best") {
      c.fitting_policy = FittingPolicy::kBest;
    } else if (f == "worst") {
      c.fitting_policy = FittingPolicy::kWorst;
    } else {
      return InvalidArgument(path + ": unknown fitting policy \"" + f +
                             "\" (expected best or worst)");
    }
  }
  return c;
}

Result<PoolConfig> ParsePoolConfig(const nlohmann::json& j, std::string_view where,
                                   const SchedulerConfig& default_scheduler) {
  DET_RETURN_IF_ERROR(CheckKeys(j, where,
                                {"pool_name", "description", "scheduler",
                                 "max_aux_containers_per_agent", "max_cpu_containers_per_agent",
                                 "task_container_defaults", "provider", "agent_reattach_enabled",
                                 "agent_reconnect_wait", "kubernetes_namespace"}));
  PoolConfig p;
  if (!j.contains("pool_name") || !j["pool_name"].is_string() ||
      j["pool_name"].get<std::string>().empty()) {
    return InvalidArgument(Path(where, "pool_name") + ": must be a non-empty string");
  }
  p.pool_name = j["pool_name"].get<std::string>();
  if (j.contains("description") && !j["description"].is_null()) {
    if (!j["description"].is_string()) {
      return InvalidArgument(Path(where, "description") + ": must be a string");
    }
    p.description = j["description"].get<std::string>();
  }
  for (const char* key : {"max_aux_containers_per_agent", "max_cpu_containers_per_agent"}) {
    if (!j.contains(key) || j[key].is_null()) continue;
    if (!j[key].is_number_integer() || j[key].get<int64_t>() < 0) {
      return InvalidArgument(Path(where, key) + ": must be a non-negative integer");
    }
    p.max_aux_containers_per_agent = static_cast<int>(j[key].get<int64_t>());
  }
  if (j.contains("task_container_defaults") && !j["task_container_defaults"].is_null()) {
    if (!j["task_container_defaults"].is_object()) {
      return InvalidArgument(Path(where, "task_container_defaults") + ": must be a mapping");
    }
    p.task_container_defaults = j["task_container_defaults"];
  }
  if (j.contains("provider") && !j["provider"].is_null()) {
    DET_ASSIGN_OR_RETURN(p.provider,
                         ParseProvisionerConfig(j["provider"], Path(where, "provider")));
  }
  p.scheduler = default_scheduler;
  if (j.contains("scheduler") && !j["scheduler"].is_null()) {
    DET_ASSIGN_OR_RETURN(p.scheduler, ParseSchedulerConfig(j["scheduler"],
                                                           Path(where, "scheduler")));
  }
  return p;
}

Result<ResourcePoolsConfig> ParseResourcePools(const nlohmann::json& resource_manager,
                                               const nlohmann::json& resource_pools) {
  ResourcePoolsConfig out;
  SchedulerConfig default_scheduler;
  if (!resource_manager.is_null()) {
    if (!resource_manager.is_object()) {
      return InvalidArgument("resource_manager: must be an object");
    }
    for (const char* key : {"default_compute_resource_pool", "default_aux_resource_pool"}) {
      if (!resource_manager.contains(key) || resource_manager[key].is_null()) continue;
      if (!resource_manager[key].is_string() || resource_manager[key].get<std::string>().empty()) {
        return InvalidArgument(std::string("resource_manager.") + key +
                               ": must be a non-empty string");
      }
      (std::string(key) == "default_compute_resource_pool" ? out.default_compute_pool
                                                            : out.default_aux_pool) =
          resource_manager[key].get<std::string>();
    }
    if (resource_manager.contains("scheduler") && !resource_manager["scheduler"].is_null()) {
      DET_ASSIGN_OR_RETURN(default_scheduler, ParseSchedulerConfig(resource_manager["scheduler"],
                                                                   "resource_manager.scheduler"));
    }
  }
  if (resource_pools.is_null()) {
    PoolConfig p;
    p.scheduler = default_scheduler;
    out.pools.push_back(p);
  } else {
    if (!resource_pools.is_array()) return InvalidArgument("resource_pools: must be a list");
    if (resource_pools.empty()) return InvalidArgument("resource_pools: must not be empty");
    std::set<std::string> names;
    for (size_t i = 0; i < resource_pools.size(); ++i) {
      std::string where = "resource_pools[" + std::to_string(i) + "]";
      DET_ASSIGN_OR_RETURN(PoolConfig p,
                           ParsePoolConfig(resource_pools[i], where, default_scheduler));
      if (!names.insert(p.pool_name).second) {
        return InvalidArgument(where + ".pool_name: duplicate pool name \"" + p.pool_name + "\"");
      }
      out.pools.push_back(std::move(p));
    }
  }
  if (out.Find(out.default_compute_pool) == nullptr) {
    return InvalidArgument("resource_manager.default_compute_resource_pool: no resource pool "
                           "named \"" + out.default_compute_pool + "\"");
  }
  if (out.Find(out.default_aux_pool) == nullptr) {
    return InvalidArgument("resource_manager.default_aux_resource_pool: no resource pool named \"" +
                           out.default_aux_pool + "\"");
  }
  return out;
}

std::string ResolvePool(const ResourcePoolsConfig& config, const AllocationRequest& request) {
  if (!request.pool.empty()) return request.pool;
  return request.slots == 0 ? config.default_aux_pool : config.default_compute_pool;
}

}  // namespace det::master::scheduler
