#pragma once
// Resource pool configuration: what each pool's scheduler does, parsed from the master config's
// `resource_pools` entries (Determined's names and defaults).
//
// Rules:
// 1. Defaults: type priority, preemption false, default_priority 42, fitting_policy best,
//    allow_heterogeneous_fits false, max_aux_containers_per_agent 100; pools without a
//    `scheduler` inherit `resource_manager.scheduler` when given.
// 2. `scheduler` accepts the flat form {type, preemption, default_priority, fitting_policy,
//    allow_heterogeneous_fits} and Determined's nested form {priority: {preemption,
//    default_priority}} / {fair_share: {}}; fields of the wrong scheduler type are errors.
// 3. type round_robin is rejected ("use priority with equal priorities"); unknown keys are errors.
// 4. default_priority must lie in 1..99 (lower number = more important).
// 5. Pool names are unique and non-empty; default_compute_resource_pool and
//    default_aux_resource_pool (default "default") must name a configured pool.
// Error messages name the offending path, e.g. `resource_pools[1].scheduler.type: ...`.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "master/scheduler/fitting.h"
#include "master/scheduler/provisioner.h"
#include "master/scheduler/types.h"

namespace det::master::scheduler {

enum class SchedulerType { kPriority, kFairShare };

const char* SchedulerTypeName(SchedulerType type);  // "priority" | "fair_share"

struct SchedulerConfig {
  SchedulerType type = SchedulerType::kPriority;
  bool preemption = false;  // priority only; fair share always preempts
  int default_priority = kDefaultPriority;
  FittingPolicy fitting_policy = FittingPolicy::kBest;
  bool allow_heterogeneous_fits = false;
};

struct PoolConfig {
  std::string pool_name = "default";
  std::string description;
  SchedulerConfig scheduler;
  int max_aux_containers_per_agent = kDefaultMaxZeroSlotContainers;
  // `provider`: the pool grows and shrinks (provisioner.h); nullopt for a static pool.
  std::optional<ProvisionerConfig> provider;
  // Merged over the master's task_container_defaults for the tasks and trials of this pool
  // (config::MergeTaskContainerDefaults); null: none.
  nlohmann::json task_container_defaults;
};

struct ResourcePoolsConfig {
  std::vector<PoolConfig> pools;
  std::string default_compute_pool = "default";
  std::string default_aux_pool = "default";

  // nullptr when no pool has that name.
  const PoolConfig* Find(std::string_view pool_name) const;
};

// Parses a `scheduler` object; `where` prefixes error messages (e.g. "resource_pools[0].scheduler").
Result<SchedulerConfig> ParseSchedulerConfig(const nlohmann::json& j, std::string_view where,
                                             const SchedulerConfig& defaults = {});

// Parses one `resource_pools` entry.
Result<PoolConfig> ParsePoolConfig(const nlohmann::json& j, std::string_view where,
                                   const SchedulerConfig& default_scheduler = {});

// Parses `resource_pools` (an array, or null for one pool named "default") together with the
// `resource_manager` object (null allowed) that holds default_compute_resource_pool,
// default_aux_resource_pool and the default `scheduler`.
Result<ResourcePoolsConfig> ParseResourcePools(const nlohmann::json& resource_manager,
                                               const nlohmann::json& resource_pools);

// The pool a request runs in: its own pool if set, else the default aux pool for zero-slot
// requests and the default compute pool for the rest.
std::string ResolvePool(const ResourcePoolsConfig& config, const AllocationRequest& request);

}  // namespace det::master::scheduler
