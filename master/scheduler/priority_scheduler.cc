#include "master/scheduler/priority_scheduler.h"

#include <algorithm>
#include <map>
#include <set>

#include "master/scheduler/fitting.h"

namespace det::master::scheduler {
namespace {

using Level = std::vector<const AllocationRequest*>;

class FilteredPriorityScheduler {
 public:
  FilteredPriorityScheduler(const SchedulerConfig& config, const PoolView& view, bool zero_slots)
      : config_(config), view_(view) {
    for (const AllocationRequest* r : PriorityOrder(view)) {
      if ((r->slots == 0) != zero_slots) continue;
      int prio = view.jobs.at(r->job_id).priority;
      (IsScheduled(*r) ? scheduled_ : pending_)[prio].push_back(r);
    }
  }

  void Run(SchedulerChoice* out) {
    std::vector<AgentState> agents = view_.agents;  // rule 2
    bool backfilling = false;
    for (const auto& [priority, level] : pending_) {
      Level successes, failures;
      for (const AllocationRequest* r : level) {  // rule 3a
        std::vector<Fit> fits = Fits(*r, agents);
        if (fits.empty()) {
          failures.push_back(r);
          continue;
        }
        ApplyFits(fits, &agents);
        successes.push_back(r);
      }
      if (to_release_.empty()) {  // rule 3b
        for (const AllocationRequest* r : successes) {
          if (!backfilling) {
            out->to_start.push_back({r, false});
          } else if (config_.preemption && r->preemptible) {
            out->to_start.push_back({r, true});
          }
        }
      }
      if (!failures.empty()) backfilling = true;  // rule 3c
      if (!config_.preemption) continue;
      for (const AllocationRequest* r : failures) {  // rule 3d
        std::vector<Fit> fits = Fits(*r, agents);
        if (!fits.empty()) {
          ApplyFits(fits, &agents);
          continue;
        }
        TryPreemption(*r, priority, &agents);
      }
    }
    for (const std::string& id : to_release_) out->to_release.push_back(id);
  }

 private:
  std::vector<Fit> Fits(const AllocationRequest& r, const std::vector<AgentState>& agents) const {
    return FindFits(r, agents, config_.fitting_policy, config_.allow_heterogeneous_fits);
  }

  void TryPreemption(const AllocationRequest& r, int priority, std::vector<AgentState>* agents) {
    std::vector<AgentState> scratch = *agents;
    std::vector<std::string> removed;
    const QueuePosition& own_position = view_.jobs.at(r.job_id).position;
    for (int p = kMaxPriority; p >= priority; --p) {
      auto it = scheduled_.find(p);
      if (it == scheduled_.end()) continue;
      const Level& candidates = it->second;
      for (size_t i = candidates.size(); i-- > 0;) {
        const AllocationRequest* c = candidates[i];
        if (p == priority && own_position >= view_.jobs.at(c->job_id).position) break;
        if (!c->preemptible || to_release_.count(c->id)) continue;
        RemoveFromAgents(*c->allocated, &scratch);
        removed.push_back(c->id);
        std::vector<Fit> fits = Fits(r, scratch);
        if (!fits.empty()) {
          ApplyFits(fits, &scratch);
          *agents = std::move(scratch);
          to_release_.insert(removed.begin(), removed.end());
          return;
        }
      }
    }
  }

  const SchedulerConfig& config_;
  const PoolView& view_;
  std::map<int, Level> pending_;
  std::map<int, Level> scheduled_;
  std::set<std::string> to_release_;
};

}  // namespace

SchedulerChoice PrioritySchedule(const SchedulerConfig& config, const PoolView& view) {
  SchedulerChoice out;
  for (bool zero_slots : {false, true}) {
    FilteredPriorityScheduler(config, view, zero_slots).Run(&out);
  }
  std::sort(out.to_release.begin(), out.to_release.end());
  out.to_release.erase(std::unique(out.to_release.begin(), out.to_release.end()),
                       out.to_release.end());
  return out;
}

}  // namespace det::master::scheduler
