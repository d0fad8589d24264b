#include "master/scheduler/job_queue.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "master/scheduler/pool_view.h"

namespace det::master::scheduler {
namespace {

struct QueuedJob {
  std::string id;
  int priority;
  QueuePosition position;
};

std::vector<QueuedJob> QueueOrder(const PoolView& view) {
  std::vector<QueuedJob> out;
  for (const AllocationRequest* r : PriorityOrder(view)) {
    bool seen = std::any_of(out.begin(), out.end(),
                            [&](const QueuedJob& q) { return q.id == r->job_id; });
    if (seen) continue;
    const ResolvedJob& j = view.jobs.at(r->job_id);
    out.push_back({j.id, j.priority, j.position});
  }
  return out;
}

bool StrictlyBetween(const QueuePosition& x, const QueuePosition& a, const QueuePosition& b) {
  const QueuePosition& lo = std::min(a, b);
  const QueuePosition& hi = std::max(a, b);
  return x > lo && x < hi;
}

}  // namespace

const char* JobQueueStateName(JobQueueState state) {
  switch (state) {
    case JobQueueState::kQueued:
      return "STATE_QUEUED";
    case JobQueueState::kScheduledBackfilled:
      return "STATE_SCHEDULED_ON_SOME";
    case JobQueueState::kScheduled:
      return "STATE_SCHEDULED";
  }
  return "STATE_UNSPECIFIED";
}

std::vector<JobQueueEntry> JobQueueInfo(const PoolConfig& config, const ClusterSnapshot& snapshot,
                                        const std::vector<std::string>& backfilled) {
  PoolView view = MakePoolView(config, snapshot);
  bool priority = config.scheduler.type == SchedulerType::kPriority;
  std::vector<const AllocationRequest*> order = priority ? PriorityOrder(view) : view.requests;
  std::vector<JobQueueEntry> out;
  std::map<std::string, size_t> index;
  for (const AllocationRequest* r : order) {
    if (!r->user_visible) continue;
    auto [it, inserted] = index.try_emplace(r->job_id, out.size());
    if (inserted) {
      const ResolvedJob& j = view.jobs.at(r->job_id);
      JobQueueEntry e;
      e.job_id = j.id;
      e.jobs_ahead = priority ? static_cast<int>(out.size()) : -1;
      e.priority = j.priority;
      e.weight = j.weight;
      e.position = j.position;
      e.submission_time_us = j.submission_time_us;
      out.push_back(e);
    }
    JobQueueEntry& e = out[it->second];
    JobQueueState state = JobQueueState::kQueued;
    if (IsScheduled(*r)) {
      bool bf = r->backfilled ||
                std::find(backfilled.begin(), backfilled.end(), r->id) != backfilled.end();
      state = bf ? JobQueueState::kScheduledBackfilled : JobQueueState::kScheduled;
      e.allocated_slots += r->slots;
    }
    e.state = std::max(e.state, state);
    e.requested_slots += r->slots;
  }
  return out;
}

Result<Job> SetPriority(const PoolConfig& config, const Job& job, int priority) {
  if (config.scheduler.type != SchedulerType::kPriority) {
    return FailedPrecondition("setting a priority needs the priority scheduler; resource pool \"" +
                              config.pool_name + "\" uses fair_share (set a weight instead)");
  }
  if (priority < kMinPriority || priority > kMaxPriority) {
    return InvalidArgument("priority must be between 1 and 99, got " + std::to_string(priority));
  }
  Job out = job;
  bool same = job.priority.value_or(config.scheduler.default_priority) == priority;
  out.priority = priority;
  if (same) return out;  // no-op: the position is kept
  out.position = QueuePosition::FromMicros(job.submission_time_us);
  return out;
}

Result<Job> SetWeight(const PoolConfig& config, const Job& job, double weight) {
  if (config.scheduler.type != SchedulerType::kFairShare) {
    return FailedPrecondition("setting a weight needs the fair_share scheduler; resource pool \"" +
                              config.pool_name + "\" uses priority (set a priority instead)");
  }
  if (!std::isfinite(weight) || weight <= 0) {
    return InvalidArgument("weight must be a positive number, got " + std::to_string(weight));
  }
  Job out = job;
  out.weight = weight;
  return out;
}

Status CheckResourcePoolChange(const ResourcePoolsConfig& config, bool is_experiment,
                               std::string_view target_pool) {
  if (!is_experiment) {
    return FailedPrecondition("only experiments can change resource pool; cancel the task and "
                              "resubmit it to another pool");
  }
  if (config.Find(target_pool) == nullptr) {
    return NotFound("resource pool \"" + std::string(target_pool) + "\" not found");
  }
  return Status::Ok();
}

Result<MoveResult> MoveJob(const PoolConfig& config, const ClusterSnapshot& snapshot,
                           std::string_view job_id, std::string_view anchor_id, bool ahead_of,
                           int64_t now_us) {
  if (config.scheduler.type != SchedulerType::kPriority) {
    return FailedPrecondition(
        "ahead-of and behind-of need the priority scheduler; resource pool \"" +
        config.pool_name + "\" uses fair_share");
  }
  MoveResult result;
  if (job_id.empty() || anchor_id.empty() || job_id == anchor_id) return result;  // 6a
  PoolView view = MakePoolView(config, snapshot);
  std::vector<QueuedJob> queue = QueueOrder(view);
  auto find = [&](std::string_view id) {
    return std::find_if(queue.begin(), queue.end(), [&](const QueuedJob& q) { return q.id == id; });
  };
  auto job_it = find(job_id);
  if (job_it == queue.end()) {
    return NotFound("job " + std::string(job_id) + " is not queued in resource pool \"" +
                    config.pool_name + "\"");
  }
  auto anchor_it = find(anchor_id);
  if (anchor_it == queue.end()) {
    return NotFound("job " + std::string(anchor_id) + " is not queued in resource pool \"" +
                    config.pool_name + "\"");
  }
  // 6b.
  QueuePosition second;
  if (ahead_of) {
    if (anchor_it == queue.begin()) {
      second = QueuePosition::FromMicros(1);
    } else {
      if (std::prev(anchor_it) == job_it) return result;
      second = std::prev(anchor_it)->position;
    }
  } else {
    if (std::next(anchor_it) == queue.end()) {
      second = QueuePosition::FromMicros(now_us);
    } else {
      if (std::next(anchor_it) == job_it) return result;
      second = std::next(anchor_it)->position;
    }
  }
  const QueuePosition anchor = anchor_it->position;
  QueuePosition pos = job_it->position;
  // 6c.
  if (job_it->priority != anchor_it->priority) {
    const ResolvedJob& rj = view.jobs.at(job_it->id);
    result.changed = true;
    result.new_priority = anchor_it->priority;
    pos = QueuePosition::FromMicros(rj.submission_time_us);
    result.new_position = pos;
    bool placed = ahead_of ? (pos < anchor && pos > second) : (pos > anchor && pos < second);
    if (placed) return result;
  }
  // 6d.
  QueuePosition next = pos;
  if (!StrictlyBetween(pos, anchor, second)) {
    next = QueuePosition::Average(anchor, second);
    if (next == anchor || next == second) {
      return FailedPrecondition("unable to compute a new queue position for job " +
                                std::string(job_id));
    }
  }
  // 6e.
  if (ahead_of && next >= anchor) next = anchor.PlusUnits(-1);
  if (!ahead_of && next <= anchor) next = anchor.PlusUnits(1);
  if (next != job_it->position || result.new_priority) {
    result.changed = true;
    result.new_position = next;
  }
  return result;
}

Result<JobUpdateArg> ParseJobUpdateArg(std::string_view arg) {
  size_t eq = arg.find('=');
  if (eq == std::string_view::npos) {
    return InvalidArgument("invalid update \"" + std::string(arg) +
                           "\": expected <job>.<operation>=<value>");
  }
  std::string_view lhs = arg.substr(0, eq);
  std::string_view value = arg.substr(eq + 1);
  size_t dot = lhs.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == lhs.size()) {
    return InvalidArgument("invalid update \"" + std::string(arg) +
                           "\": expected <job>.<operation>=<value>");
  }
  JobUpdateArg out{std::string(lhs.substr(0, dot)), std::string(lhs.substr(dot + 1)), ""};
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
      value.back() == value.front()) {
    value = value.substr(1, value.size() - 2);
  }
  out.value = std::string(value);
  static const char* kOps[] = {"priority", "weight", "resource-pool", "ahead-of", "behind-of"};
  if (std::none_of(std::begin(kOps), std::end(kOps),
                   [&](const char* op) { return out.op == op; })) {
    return InvalidArgument("invalid update \"" + std::string(arg) + "\": unknown operation \"" +
                           out.op + "\" (expected priority, weight, resource-pool, ahead-of or "
                           "behind-of)");
  }
  if (out.value.empty()) {
    return InvalidArgument("invalid update \"" + std::string(arg) + "\": empty value");
  }
  return out;
}

}  // namespace det::master::scheduler
