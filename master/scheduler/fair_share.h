#pragma once
// The fair share scheduler (fair_share.go; §5.4). Deprecated in Determined, kept here; always
// preemptive.
//
// Rules:
// 1. Pending zero-slot tasks that fit on the (unchanged) agents are started directly.
// 2. capacity = sum of the agents' slots. Job states are built, in task-list order, from tasks
//    with 0 < slots <= capacity that either hold resources or would fit on the idle agents
//    (Determined: "currently fit", so a full pool never preempts for a new job): demand = sum of
//    slots (capped at max_slots), active = slots held, presubscribed = slots held by
//    non-preemptible tasks.
// 3. Offers (max-min progressive filling): presubscribed slots are pre-offered and taken from
//    capacity. Jobs are sorted by demand ascending, then submission time, then job id. Each
//    round: start = capacity; for each enabled job below its demand: share = max(1,
//    floor(start * weight / total_weight)) (total_weight over enabled unsatisfied jobs,
//    recomputed when one is satisfied; share = 1 when total_weight <= 0), offer = min(share,
//    capacity, demand - offered), net out what remains of its pre-offer, add.
// 4. Deadlock breaker: when capacity reaches 0, the NEWEST (latest submission, then greatest
//    job id) enabled, unsatisfied job whose smallest pending task needs more than its offer is
//    disabled and its offer returned to capacity; if there is none, offering stops. A round
//    that offers nothing also stops.
// 5. Per job: if active > offered, release preemptible held tasks in task-list order (oldest
//    first) until active <= offered; else if active < offered, start pending tasks in order
//    whose slots fit the remaining offer and which fit on the agents. Never both in one tick.
//    A share change (new job, weight or max_slots change) therefore preempts through rule 5.
// 6. Tie-breaks and quirk decisions (§7.4): rule 4's newest-first order is implemented as
//    intended (Go sorts the wrong slice); pre-offers are netted as intended (Go's third branch
//    is a no-op that double counts); weights <= 0 make share 1 instead of relying on int(NaN).

#include "master/scheduler/pool_config.h"
#include "master/scheduler/pool_view.h"
#include "master/scheduler/priority_scheduler.h"

namespace det::master::scheduler {

SchedulerChoice FairShareSchedule(const SchedulerConfig& config, const PoolView& view);

}  // namespace det::master::scheduler
