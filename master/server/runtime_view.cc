#include "master/server/runtime_view.h"

namespace det::master::server {

using core::AllocationState;

void RuntimeView::PutExperiment(int64_t id, core::RunState state) {
  MutexLock lock(&mu_);
  experiments_[id].state = state;
}

void RuntimeView::RemoveExperiment(int64_t id) {
  MutexLock lock(&mu_);
  experiments_.erase(id);
}

void RuntimeView::PutTrial(int64_t id, int64_t experiment_id, core::RunState state, int64_t run_id,
                           const std::string& task_id) {
  MutexLock lock(&mu_);
  Trial& t = trials_[id];
  t.experiment_id = experiment_id;
  t.state = state;
  t.run_id = run_id;
  if (t.task_id != task_id) {
    if (!t.task_id.empty()) trial_by_task_.erase(t.task_id);
    t.task_id = task_id;
    if (!task_id.empty()) trial_by_task_[task_id] = id;
  }
}

void RuntimeView::RemoveTrial(int64_t id) {
  MutexLock lock(&mu_);
  auto it = trials_.find(id);
  if (it == trials_.end()) return;
  Trial gone = it->second;
  trials_.erase(it);
  trial_by_task_.erase(gone.task_id);
  std::optional<AllocationState> before = gone.activity;
  gone.activity.reset();
  Recount(gone, before);
}

void RuntimeView::Recount(const Trial& t, std::optional<AllocationState> before) {
  auto exp = experiments_.find(t.experiment_id);
  if (exp == experiments_.end()) return;
  auto count = [&](std::optional<AllocationState> s, int delta) {
    if (s == AllocationState::kRunning) exp->second.running += delta;
    if (s == AllocationState::kAssigned) exp->second.assigned += delta;
  };
  count(before, -1);
  count(t.activity, +1);
}

void RuntimeView::SetAllocation(int64_t trial_id, const std::string& allocation_id,
                                std::optional<AllocationState> state) {
  MutexLock lock(&mu_);
  auto it = trials_.find(trial_id);
  if (it == trials_.end()) return;
  Trial& t = it->second;
  // An older allocation's end does not clear the trial's newer one.
  if (!state && !t.allocation_id.empty() && t.allocation_id != allocation_id) return;
  if (state == AllocationState::kTerminated) state.reset();
  std::optional<AllocationState> before = t.activity;
  t.allocation_id = state ? allocation_id : "";
  t.activity = state;
  Recount(t, before);
}

void RuntimeView::SetHeld(const std::string& allocation_id, std::vector<Held> held) {
  MutexLock lock(&held_mu_);
  auto it = held_.find(allocation_id);
  if (it != held_.end()) {
    for (const Held& h : it->second) {
      auto agent = slots_by_agent_.find(h.agent_id);
      if (agent == slots_by_agent_.end()) continue;
      for (int s : h.slot_ids) {
        auto slot = agent->second.find(s);
        if (slot != agent->second.end() && slot->second.allocation_id == allocation_id) {
          agent->second.erase(slot);
        }
      }
      if (agent->second.empty()) slots_by_agent_.erase(agent);
    }
    held_.erase(it);
  }
  if (held.empty()) return;
  for (const Held& h : held) {
    std::map<int, SlotUse>& slots = slots_by_agent_[h.agent_id];
    for (int s : h.slot_ids) slots[s] = SlotUse{allocation_id, h.resources_id};
  }
  held_.emplace(allocation_id, std::move(held));
}

std::map<int, RuntimeView::SlotUse> RuntimeView::SlotsOn(const std::string& agent_id) const {
  MutexLock lock(&held_mu_);
  auto it = slots_by_agent_.find(agent_id);
  if (it == slots_by_agent_.end()) return {};
  return it->second;
}

std::optional<RuntimeView::Trial> RuntimeView::FindTrial(int64_t id) const {
  MutexLock lock(&mu_);
  auto it = trials_.find(id);
  if (it == trials_.end()) return std::nullopt;
  return it->second;
}

std::optional<int64_t> RuntimeView::RunOf(int64_t trial_id) const {
  MutexLock lock(&mu_);
  auto it = trials_.find(trial_id);
  if (it == trials_.end()) return std::nullopt;
  return it->second.run_id;
}

std::optional<int64_t> RuntimeView::TrialOfTask(const std::string& task_id) const {
  MutexLock lock(&mu_);
  auto it = trial_by_task_.find(task_id);
  if (it == trial_by_task_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> RuntimeView::PresentedExperimentState(int64_t id) const {
  MutexLock lock(&mu_);
  auto it = experiments_.find(id);
  if (it == experiments_.end()) return std::nullopt;
  return core::PresentedExperimentState(it->second.state, it->second.running > 0,
                                        it->second.assigned > 0);
}

std::string RuntimeView::PresentedTrialState(int64_t trial_id, const std::string& db_state) const {
  std::optional<core::RunState> state = core::ParseRunState(db_state);
  if (!state) return "STATE_" + db_state;
  std::optional<AllocationState> live;
  {
    MutexLock lock(&mu_);
    auto it = trials_.find(trial_id);
    if (it != trials_.end()) live = it->second.activity;
  }
  return core::PresentedTrialState(*state, core::ActivityOf(live));
}

}  // namespace det::master::server
