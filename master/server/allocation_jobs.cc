// AllocationService: the job queue (`det job list`, `det job update`).
#include <future>

#include "master/scheduler/job_queue.h"
#include "master/server/allocation_service.h"
#include "master/server/provisioner_service.h"
#include "master/server/task_service.h"
#include "master/server/workspace_service.h"

namespace det::master::server {

using nlohmann::json;

std::vector<JobView> AllocationService::ListJobs(const std::string& pool_filter) {
  return deps_.loop->Read<std::vector<JobView>>([this, &pool_filter]() {
    runtime_role.Assume();
    return ListJobsNow(pool_filter);
  });
}

std::vector<JobView> AllocationService::ListJobsNow(const std::string& pool_filter) {
  scheduler::ClusterSnapshot snap = Snapshot();
  // The queue's view of a job, the same for experiments and tasks.
  auto queue_view = [](const scheduler::JobQueueEntry& e, const std::string& pool_name) {
    JobView j;
    j.job_id = e.job_id;
    j.priority = e.priority;
    j.weight = e.weight;
    j.resource_pool = pool_name;
    j.requested_slots = e.requested_slots;
    j.allocated_slots = e.allocated_slots;
    j.scheduled = e.state != scheduler::JobQueueState::kQueued;
    j.state = scheduler::JobQueueStateName(e.state);
    j.jobs_ahead = e.jobs_ahead;
    j.position = e.position.ToString();
    return j;
  };
  std::vector<JobView> jobs;
  for (const auto& pool : deps_.config->pools.pools) {
    if (!pool_filter.empty() && pool.pool_name != pool_filter) continue;
    scheduler::ClusterSnapshot in_pool = snap;
    std::erase_if(in_pool.requests,
                  [&](const scheduler::AllocationRequest& r) { return r.pool != pool.pool_name; });
    std::vector<std::string> backfilled;
    for (const auto& r : in_pool.requests) {
      if (r.backfilled) backfilled.push_back(r.id);
    }
    for (const scheduler::JobQueueEntry& e : scheduler::JobQueueInfo(pool, in_pool, backfilled)) {
      auto it = jobs_.find(e.job_id);
      if (it == jobs_.end()) {
        // A command, notebook, shell or TensorBoard.
        std::optional<TaskService::JobInfo> task = deps_.tasks->Job(e.job_id);
        if (!task) continue;
        JobView j = queue_view(e, pool.pool_name);
        j.type = task->type;
        j.entity_id = task->task_id;
        j.name = task->name;
        j.username = task->username;
        j.submission_time = task->submission_time;
        j.preemptible = false;
        jobs.push_back(std::move(j));
        continue;
      }
      const JobSpec& spec = it->second;
      JobView j = queue_view(e, pool.pool_name);
      j.experiment_id = spec.experiment_id;
      j.name = spec.name;
      j.username = spec.username;
      j.submission_time = spec.submission_time;
      if (slurm_) OverlaySlurmJob(spec.job_id, &j);
      if (deps_.provisioner && e.state == scheduler::JobQueueState::kQueued) {
        j.rm_detail = ProvisionerJobDetail(*deps_.provisioner, pool.pool_name);
      }
      jobs.push_back(std::move(j));
    }
  }
  return jobs;
}

void AllocationService::UpdateJob(const std::string& job_id, json update, Done<Status> done) {
  deps_.loop->Decide([this, job_id, update = std::move(update)]()
                         ON_RUNTIME { return UpdateJobNow(job_id, update); },
                     std::move(done));
}

Status AllocationService::UpdateJob(const std::string& job_id, const json& update) {
  std::promise<Status> p;
  UpdateJob(job_id, update, [&p](Status st) { p.set_value(std::move(st)); });
  return p.get_future().get();
}

Status AllocationService::UpdateJobNow(const std::string& job_id, const json& update) {
  auto job_it = jobs_.find(job_id);
  if (job_it == jobs_.end() || job_it->second.terminal) {
    if (deps_.tasks->Job(job_id)) {
      // A command's, notebook's, shell's or TensorBoard's job.
      DET_RETURN_IF_ERROR(deps_.tasks->UpdateJob(job_id, update));
      RequestPass();
      return Status::Ok();
    }
    return NotFound("job " + job_id + " not found among active jobs");
  }
  const JobSpec spec = job_it->second;
  const scheduler::PoolConfig* pool = deps_.config->pools.Find(spec.pool);
  if (pool == nullptr) {
    return FailedPrecondition("job " + job_id + ": no resource pool " + spec.pool);
  }
  scheduler::ClusterSnapshot snap = Snapshot();
  scheduler::Job job;
  for (const auto& j : snap.jobs) {
    if (j.id == job_id) job = j;
  }
  json resources = json::object();
  bool position_set = false;
  std::optional<scheduler::QueuePosition> new_position;
  auto anchor = [&](const char* camel, const char* snake) -> const json* {
    if (update.contains(camel)) return &update[camel];
    if (update.contains(snake)) return &update[snake];
    return nullptr;
  };
  if (const json* v = anchor("priority", "priority")) {
    if (!v->is_number_integer()) {
      return InvalidArgument("priority: must be an integer between 1 and 99 (got " + v->dump() +
                             ")");
    }
    DET_ASSIGN_OR_RETURN(scheduler::Job updated, scheduler::SetPriority(*pool, job, v->get<int>()));
    if (updated.position != job.position || updated.priority != job.priority) {
      position_set = true;
      new_position = updated.position;
      resources["priority"] = *v;
    }
  } else if (const json* v = anchor("weight", "weight")) {
    if (!v->is_number()) {
      return InvalidArgument("weight: must be a number > 0 (got " + v->dump() + ")");
    }
    DET_ASSIGN_OR_RETURN(scheduler::Job updated,
                         scheduler::SetWeight(*pool, job, v->get<double>()));
    resources["weight"] = updated.weight;
  } else if (const json* v = anchor("resourcePool", "resource_pool")) {
    if (!v->is_string()) {
      return InvalidArgument("resourcePool: must be a string (got " + v->dump() + ")");
    }
    std::string target = v->get<std::string>();
    DET_RETURN_IF_ERROR(scheduler::CheckResourcePoolChange(deps_.config->pools, true, target));
    if (deps_.workspaces != nullptr) {
      DET_RETURN_IF_ERROR(
          deps_.workspaces->ResolvePoolForExperiment(spec.experiment_id, target, 1).status());
    }
    resources["resource_pool"] = target;
  } else if (const json* a = anchor("aheadOf", "ahead_of"); a || anchor("behindOf", "behind_of")) {
    bool ahead = a != nullptr;
    const json* other = ahead ? a : anchor("behindOf", "behind_of");
    if (!other->is_string()) {
      return InvalidArgument(std::string(ahead ? "aheadOf" : "behindOf") + ": must be a job id");
    }
    std::erase_if(snap.requests,
                  [&](const scheduler::AllocationRequest& r) { return r.pool != spec.pool; });
    DET_ASSIGN_OR_RETURN(
        scheduler::MoveResult moved,
        scheduler::MoveJob(*pool, snap, job_id, other->get<std::string>(), ahead, Now()));
    if (!moved.changed) return Status::Ok();
    if (moved.new_priority) resources["priority"] = *moved.new_priority;
    position_set = true;
    new_position = moved.new_position;
  } else {
    return InvalidArgument(
        "updates: each needs one of priority, weight, resourcePool, aheadOf, behindOf");
  }
  // The experiment's config and queue position change with it (and its job here, through
  // SetJob).
  DET_RETURN_IF_ERROR(
      owner_->UpdateJobOf(spec.experiment_id, resources, position_set, new_position));
  if (slurm_ && resources.contains("priority")) {
    SlurmPriorityChanged(job_id, resources["priority"].get<int>());
  }
  if (resources.contains("resource_pool")) {
    // Running work moves by the usual graceful preemption; it is re-queued in the new pool.
    std::vector<std::string> running;
    for (const auto& [id, a] : allocations_) {
      if (a->job_id == job_id) running.push_back(id);
    }
    for (const std::string& id : running) Release(id);
  }
  RequestPass();
  return Status::Ok();
}

}  // namespace det::master::server
