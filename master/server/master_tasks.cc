// Master: the live allocations as tasks (`det task list`, `det slot list`), the user list and
// an experiment's model definition.
#include "master/server/master.h"
#include "master/server/master_runtime.h"

namespace det::master::server {

Result<std::string> Master::GetModelDefinition(int64_t experiment_id) {
  return store_->GetModelDefinition(experiment_id);
}

std::vector<AllocationSummaryView> Master::ListAllocations() {
  MutexLock lock(&mu_);
  std::vector<AllocationSummaryView> out;
  for (const auto& [id, a] : allocations_) {
    if (a->state == AllocationRuntime::State::kTerminated) continue;
    AllocationSummaryView v;
    v.allocation_id = a->id;
    v.task_id = a->task_id;
    v.trial_id = a->trial_id;
    v.slots_needed = a->slots;
    v.registered_time = a->queued_at;
    v.state = core::PresentedAllocationState(a->state);
    auto trial = trials_.find(a->trial_id);
    if (trial != trials_.end()) {
      v.experiment_id = trial->second->experiment_id;
      auto exp = experiments_.find(v.experiment_id);
      if (exp != experiments_.end()) {
        v.resource_pool = PoolOfLocked(*exp->second);
        v.priority = exp->second->config.resources.priority;
      }
    }
    v.name = "Trial " + std::to_string(v.trial_id) + " (Experiment " +
             std::to_string(v.experiment_id) + ")";
    for (size_t rank = 0; rank < a->resources.size(); ++rank) {
      const auto& res = a->resources[rank];
      if (res.exited) continue;
      v.resources.push_back({ResourcesId(*a, rank), res.agent_id, res.slot_ids, res.started});
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace det::master::server
