#pragma once
// The priority scheduler (Determined's default, priority.go; §5.3).
//
// Run twice per tick, once over slot tasks and once over zero-slot tasks, independently.
// Rules:
// 1. Tasks are taken in priority order (pool_view.h rule 5) and split per priority level into
//    pending and scheduled (holding resources).
// 2. Work happens on a copy of the agents; backfilling = false; to_release = {}.
// 3. For each priority level, most important (lowest number) first:
//    a. try every pending task of the level in order; each fit reserves its slots in the copy,
//       so a later, smaller task of the same level may start while an earlier, larger one
//       cannot;
//    b. only if to_release is still empty: without backfilling start every success; while
//       backfilling start only preemptible successes (marked backfilled) and only if
//       preemption is enabled; otherwise start none;
//    c. any failure at this level turns backfilling on for all lower levels (so, with
//       preemption off, one oversized important task blocks every lower level);
//    d. with preemption enabled, each failed task first re-tries a fit (space freed by already
//       chosen preemptions) and reserves it; else candidates are scanned from priority 99 up to
//       the task's own, each level from the BACK of its queue; at the task's own priority the
//       scan stops at the first candidate whose job position is <= the task's (only jobs
//       behind it are preempted); non-preemptible and already chosen candidates are skipped;
//       each candidate is removed from a scratch copy and, once the task fits, the removals are
//       committed (added to to_release) and the task is reserved. The preempting task itself
//       is not started in this tick.
// 4. Group.max_slots is ignored (quirk 7.6, kept: max_slots is a fair share knob).

#include <string>
#include <utility>
#include <vector>

#include "master/scheduler/pool_config.h"
#include "master/scheduler/pool_view.h"

namespace det::master::scheduler {

struct SchedulerChoice {
  struct Start {
    const AllocationRequest* request = nullptr;
    bool backfilled = false;
  };
  std::vector<Start> to_start;          // decision order
  std::vector<std::string> to_release;  // sorted, unique
};

SchedulerChoice PrioritySchedule(const SchedulerConfig& config, const PoolView& view);

}  // namespace det::master::scheduler
