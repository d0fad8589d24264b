#pragma once
// The one call the master makes per scheduling tick and resource pool.
//
// Rules:
// 1. The pool's scheduler (priority or fair share) decides which pending requests start and
//    which running ones to release (preempt).
// 2. The starts are then placed in decision order on the snapshot's agents (releases are NOT
//    counted as free: their slots free up only when the tasks exit), re-running FindFits after
//    each placement; a start that no longer fits is skipped this tick, as in Determined.
// 3. Releases are returned sorted; the master sends them "preempted by the scheduler".

#include <map>
#include <string>

#include "master/scheduler/pool_config.h"
#include "master/scheduler/types.h"

namespace det::master::scheduler {

// Schedules one pool: agents and requests whose `pool` equals config.pool_name (an empty pool
// counts as "default").
ScheduleDecision Schedule(const PoolConfig& config, const ClusterSnapshot& snapshot);

// Schedules every configured pool; requests with an empty pool go to the default compute/aux
// pool (ResolvePool). Keyed by pool name.
std::map<std::string, ScheduleDecision> ScheduleAll(const ResourcePoolsConfig& config,
                                                    const ClusterSnapshot& snapshot);

}  // namespace det::master::scheduler
