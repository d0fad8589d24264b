#pragma once
// PoolView: one resource pool's slice of a ClusterSnapshot with defaults resolved, and the
// queue orders both schedulers use.
//
// Rules:
// 1. Agents and requests belong to the pool whose name they carry (requests with an empty pool
//    must be resolved by the caller with ResolvePool; Schedule() treats them as this pool's only
//    if the pool is named "default").
// 2. A job's effective priority is its own or the pool's default_priority; its position is its
//    stored position or QueuePosition::FromMicros(submission time).
// 3. A request whose job is missing from the snapshot gets a synthesized job (defaults,
//    submitted at the request's time) instead of being dropped.
// 4. Task-list order (fair share): job submission time, then request time, then allocation id.
// 5. Priority order (§5.3 rule 1, the job queue): priority ascending, then position ascending,
//    then task-list order. Positions compare numerically (negative positions are not special;
//    see docs/scheduling.md).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "master/scheduler/agent_state.h"
#include "master/scheduler/pool_config.h"
#include "master/scheduler/types.h"

namespace det::master::scheduler {

struct ResolvedJob {
  std::string id;
  int priority = kDefaultPriority;
  QueuePosition position;
  int64_t submission_time_us = 0;
  double weight = 1.0;
  std::optional<int> max_slots;
};

struct PoolView {
  std::vector<AgentState> agents;                 // sorted by id
  std::vector<const AllocationRequest*> requests;  // task-list order (rule 4)
  std::map<std::string, ResolvedJob> jobs;
};

PoolView MakePoolView(const PoolConfig& config, const ClusterSnapshot& snapshot);

// Requests in priority order (rule 5).
std::vector<const AllocationRequest*> PriorityOrder(const PoolView& view);

inline bool IsScheduled(const AllocationRequest& r) { return r.allocated.has_value(); }

}  // namespace det::master::scheduler
