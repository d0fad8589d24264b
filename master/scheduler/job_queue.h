#pragma once
// The job queue of one resource pool (§5.6): what `det job list` shows and what
// `det job update` / `update-batch` may change.
//
// Rules:
// 1. A job's position starts as QueuePosition::FromMicros(submission time). Queue order is the
//    priority order of pool_view.h (priority, position, submission, request time, id), reduced
//    to jobs by first appearance; jobs_ahead is the job's index in that order (only
//    user-visible requests count). Fair share pools report jobs_ahead = -1 (Determined:
//    "unsupported") and list jobs in task-list (submission) order.
// 2. A job's state is the highest of its requests: queued < scheduled (backfilled) < scheduled.
//    requested slots = sum over requests; allocated = sum over requests holding resources.
// 3. SetPriority: priority pools only, 1..99. Setting the job's current priority is a no-op;
//    any other value resets the position to the submission-time value.
// 4. SetWeight: fair share pools only, weight > 0 and finite.
// 5. CheckResourcePoolChange: only experiments may change pool, and the pool must exist; the
//    master then terminates the job's allocations and re-queues them there.
// 6. MoveJob (ahead-of / behind-of, priority pools only; fair share -> FailedPrecondition):
//    a. moving a job relative to itself is a no-op; both jobs must be queued in the pool;
//    b. the second anchor is the job just before the anchor (ahead) or just after it
//       (behind) in queue order, else HEAD (position 1) / TAIL (position now_us); if the second
//       anchor is the moving job, nothing changes;
//    c. if the job's priority differs from the anchor's, it takes the anchor's priority (its
//       position resets, rule 3); if it then lies strictly between anchor and second anchor
//       (ahead: second < pos < anchor; behind: anchor < pos < second), that is the result;
//    d. if the job lies strictly between the two anchors it keeps its position; else
//       new = Average(anchor, second), an error if that equals either of them;
//    e. ahead and new >= anchor -> anchor - 1 unit; behind and new <= anchor -> anchor + 1 unit.
//    Unlike Determined (which takes neighbours in the task list, so a job with several tasks
//    can be its own neighbour) anchors are neighbours in the job list.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "master/scheduler/pool_config.h"
#include "master/scheduler/types.h"

namespace det::master::scheduler {

enum class JobQueueState { kQueued = 0, kScheduledBackfilled = 1, kScheduled = 2 };
const char* JobQueueStateName(JobQueueState state);  // "STATE_QUEUED", ...

struct JobQueueEntry {
  std::string job_id;
  int jobs_ahead = 0;
  JobQueueState state = JobQueueState::kQueued;
  int priority = kDefaultPriority;
  double weight = 1.0;
  QueuePosition position;
  int64_t submission_time_us = 0;
  int requested_slots = 0;
  int allocated_slots = 0;
};

// Rule 1 and 2. `backfilled` lists request ids started as "scheduled backfilled".
std::vector<JobQueueEntry> JobQueueInfo(const PoolConfig& config, const ClusterSnapshot& snapshot,
                                        const std::vector<std::string>& backfilled = {});

// Rule 3: returns the job as it must be stored.
Result<Job> SetPriority(const PoolConfig& config, const Job& job, int priority);
// Rule 4.
Result<Job> SetWeight(const PoolConfig& config, const Job& job, double weight);
// Rule 5.
Status CheckResourcePoolChange(const ResourcePoolsConfig& config, bool is_experiment,
                               std::string_view target_pool);

struct MoveResult {
  bool changed = false;
  std::optional<int> new_priority;          // set when the job took the anchor's priority
  std::optional<QueuePosition> new_position;  // set whenever the stored position changes
};

// Rule 6. `now_us` is the TAIL anchor.
Result<MoveResult> MoveJob(const PoolConfig& config, const ClusterSnapshot& snapshot,
                           std::string_view job_id, std::string_view anchor_id, bool ahead_of,
                           int64_t now_us);

// One `det job update-batch` argument: `<job>.<op>=<value>`, op one of priority, weight,
// resource-pool, ahead-of, behind-of (quotes around the value are stripped).
struct JobUpdateArg {
  std::string job_id;
  std::string op;
  std::string value;
};
Result<JobUpdateArg> ParseJobUpdateArg(std::string_view arg);

}  // namespace det::master::scheduler
