#include "master/scheduler/fair_share.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "master/scheduler/fitting.h"

namespace det::master::scheduler {
namespace {

struct JobState {
  const ResolvedJob* job = nullptr;
  bool disabled = false;
  int demand = 0;
  int active = 0;
  int presubscribed = 0;
  int offered = 0;
  std::vector<const AllocationRequest*> pending;
  std::vector<const AllocationRequest*> allocated;
};

double TotalWeight(const std::vector<JobState*>& states) {
  double total = 0;
  for (const JobState* s : states) {
    if (!s->disabled && s->offered < s->demand) total += s->job->weight;
  }
  return total;
}

// Nets an offer against what is left of a pre-offer (rule 3).
void AccountForPreoffers(int* preoffer, int* offer) {
  if (*preoffer <= 0) return;
  if (*preoffer >= *offer) {
    *preoffer -= *offer;
    *offer = 0;
  } else {
    *offer -= *preoffer;
    *preoffer = 0;
  }
}

int SmallestPending(const JobState& s) {
  int smallest = -1;
  for (const AllocationRequest* r : s.pending) {
    if (smallest < 0 || r->slots < smallest) smallest = r->slots;
  }
  return smallest;
}

void AllocateOffers(std::vector<JobState*> states, int capacity) {
  std::map<JobState*, int> preoffers;
  for (JobState* s : states) {
    if (s->presubscribed == 0) continue;
    s->offered = s->presubscribed;
    preoffers[s] = s->presubscribed;
    capacity -= s->presubscribed;
  }
  std::stable_sort(states.begin(), states.end(), [](const JobState* a, const JobState* b) {
    if (a->demand != b->demand) return a->demand < b->demand;
    if (a->job->submission_time_us != b->job->submission_time_us) {
      return a->job->submission_time_us < b->job->submission_time_us;
    }
    return a->job->id < b->job->id;
  });
  std::vector<JobState*> newest_first = states;
  std::stable_sort(newest_first.begin(), newest_first.end(),
                   [](const JobState* a, const JobState* b) {
                     if (a->job->submission_time_us != b->job->submission_time_us) {
                       return a->job->submission_time_us > b->job->submission_time_us;
                     }
                     return a->job->id > b->job->id;
                   });
  double total_weight = TotalWeight(states);
  while (true) {
    bool progress = false;
    int start = capacity;
    for (JobState* s : states) {
      if (s->disabled || s->offered >= s->demand) continue;
      int share = 1;
      if (total_weight > 0) {
        double raw = std::floor(static_cast<double>(start) * s->job->weight / total_weight);
        share = std::max(1, static_cast<int>(std::min(raw, 1e9)));
      }
      progress = true;
      int offer = std::min({share, capacity, s->demand - s->offered});
      AccountForPreoffers(&preoffers[s], &offer);
      s->offered += offer;
      capacity -= offer;
      if (s->offered >= s->demand) total_weight = TotalWeight(states);
    }
    bool anyone_left = false;
    for (const JobState* s : states) anyone_left |= !s->disabled && s->offered < s->demand;
    if (!anyone_left) return;
    if (capacity <= 0) {
      bool adjusted = false;
      for (JobState* s : newest_first) {
        int smallest = SmallestPending(*s);
        if (!s->disabled && s->offered != s->demand && smallest >= 0 && smallest > s->offered) {
          capacity += s->offered;
          s->offered = 0;
          s->disabled = true;
          adjusted = true;
          total_weight = TotalWeight(states);
          break;
        }
      }
      if (!adjusted) return;
    } else if (!progress) {
      return;
    }
  }
}

}  // namespace

SchedulerChoice FairShareSchedule(const SchedulerConfig& config, const PoolView& view) {
  SchedulerChoice out;
  const std::vector<AgentState>& agents = view.agents;
  auto fits = [&](const AllocationRequest& r) {
    return !FindFits(r, agents, config.fitting_policy, config.allow_heterogeneous_fits).empty();
  };
  // Rule 1.
  for (const AllocationRequest* r : view.requests) {
    if (r->slots == 0 && !IsScheduled(*r) && fits(*r)) out.to_start.push_back({r, false});
  }
  // Rule 2. A pending task counts when it fits on the pool's agents once they are idle: with
  // "fits now" (Determined) a full pool never makes room for a new job's share.
  int capacity = 0;
  std::vector<AgentState> idle;
  for (const AgentState& a : agents) {
    capacity += a.NumSlots();
    idle.push_back(a.Emptied());
  }
  auto could_fit = [&](const AllocationRequest& r) {
    return !FindFits(r, idle, config.fitting_policy, config.allow_heterogeneous_fits).empty();
  };
  std::map<std::string, JobState> by_job;
  std::vector<JobState*> states;
  for (const AllocationRequest* r : view.requests) {
    if (r->slots == 0 || r->slots > capacity) continue;
    if (!IsScheduled(*r) && !could_fit(*r)) continue;
    auto [it, inserted] = by_job.try_emplace(r->job_id);
    JobState& s = it->second;
    if (inserted) {
      s.job = &view.jobs.at(r->job_id);
      states.push_back(&s);
    }
    s.demand += r->slots;
    if (IsScheduled(*r)) {
      if (!r->preemptible) s.presubscribed += r->slots;
      s.allocated.push_back(r);
      s.active += r->slots;
    } else {
      s.pending.push_back(r);
    }
  }
  for (JobState* s : states) {
    if (s->job->max_slots) s->demand = std::min(s->demand, *s->job->max_slots);
  }
  // Rules 3 and 4.
  AllocateOffers(states, capacity);
  // Rule 5 (task-list order of first appearance).
  for (JobState* s : states) {
    if (s->active > s->offered) {
      for (const AllocationRequest* r : s->allocated) {
        if (!r->preemptible) continue;
        out.to_release.push_back(r->id);
        s->active -= r->slots;
        if (s->active <= s->offered) break;
      }
    } else if (s->active < s->offered) {
      int remaining = s->offered - s->active;
      for (const AllocationRequest* r : s->pending) {
        if (r->slots > remaining || !fits(*r)) continue;
        out.to_start.push_back({r, false});
        remaining -= r->slots;
      }
    }
  }
  std::sort(out.to_release.begin(), out.to_release.end());
  return out;
}

}  // namespace det::master::scheduler
