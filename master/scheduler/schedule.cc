#include "master/scheduler/schedule.h"

#include "master/scheduler/fair_share.h"
#include "master/scheduler/fitting.h"
#include "master/scheduler/pool_view.h"
#include "master/scheduler/priority_scheduler.h"

namespace det::master::scheduler {

ScheduleDecision Schedule(const PoolConfig& config, const ClusterSnapshot& snapshot) {
  PoolView view = MakePoolView(config, snapshot);
  SchedulerChoice choice = config.scheduler.type == SchedulerType::kPriority
                               ? PrioritySchedule(config.scheduler, view)
                               : FairShareSchedule(config.scheduler, view);
  ScheduleDecision out;
  std::vector<AgentState> agents = view.agents;
  for (const SchedulerChoice::Start& start : choice.to_start) {
    std::vector<Fit> fits = FindFits(*start.request, agents, config.scheduler.fitting_policy,
                                     config.scheduler.allow_heterogeneous_fits);
    if (fits.empty()) continue;
    out.to_allocate.push_back(
        Allocation{start.request->id, ApplyFits(fits, &agents), start.backfilled});
  }
  out.to_release = std::move(choice.to_release);
  return out;
}

std::map<std::string, ScheduleDecision> ScheduleAll(const ResourcePoolsConfig& config,
                                                    const ClusterSnapshot& snapshot) {
  ClusterSnapshot resolved = snapshot;
  for (AllocationRequest& r : resolved.requests) r.pool = ResolvePool(config, r);
  for (Agent& a : resolved.agents) {
    if (a.pool.empty()) a.pool = "default";
  }
  std::map<std::string, ScheduleDecision> out;
  for (const PoolConfig& pool : config.pools) out[pool.pool_name] = Schedule(pool, resolved);
  return out;
}

}  // namespace det::master::scheduler
