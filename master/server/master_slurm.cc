// Master: the Slurm resource manager. Every pool is a Slurm partition; each pending allocation
// becomes one Slurm job (SlurmService), whose per-node agents register as slurm-<job>-<node>;
// when all have, the allocation starts on them as on any agents. Slurm's cancellations and
// losses end allocations as infrastructure failures.
#include <filesystem>
#include <system_error>

#include <spdlog/spdlog.h>

#include "master/server/master.h"
#include "master/server/master_runtime.h"
#include "master/server/slurm_service.h"

namespace det::master::server {

using nlohmann::json;

bool Master::IsSlurmPoolLocked(const std::string& pool) const {
  // Under the Slurm resource manager every pool is a partition.
  return slurm_ != nullptr && !pool.empty();
}

Status Master::StartSlurm() {
  if (!config_.slurm) return Status::Ok();
  slurm_ = std::make_unique<SlurmService>(*config_.slurm, store_.get(), clock_,
                                          SlurmService::ToolRunner(*config_.slurm));
  SlurmService::Listener listener;
  listener.job_ended = [this](const std::string& allocation_id, const slurm::JobStatus& s) {
    MutexLock lock(&mu_);
    auto it = allocations_.find(allocation_id);
    if (it == allocations_.end()) return;
    AllocationRuntime& alloc = *it->second;
    if (alloc.state == AllocationRuntime::State::kTerminated) return;
    bool lost = s.state == slurm::JobState::kUnknown;
    // A job that failed or completed without its agents reporting an exit counts against the
    // trial (max_restarts bounds a job that can never start); Slurm's own doing does not.
    bool infrastructure = lost || slurm::IsInfrastructureEnd(s.state);
    std::string error = "Slurm job " + s.job_id + (lost ? " was lost" : " ended " + s.state_text);
    if (!s.reason.empty() && s.reason != "None") error += " (" + s.reason + ")";
    const TrialRuntime& t = *trials_.at(alloc.trial_id);
    AppendMasterLogLocked(t.id, t.task_id, error);
    KillResourcesLocked(alloc);
    Status st = HandleAllocationExitLocked(alloc, -1, error, infrastructure);
    if (!st.ok()) spdlog::error("slurm: ending allocation {}: {}", allocation_id, st.ToString());
    ScheduleLocked();
  };
  listener.exit_verdict = [this](const SlurmService::DeferredExit& d, bool infrastructure,
                                 const std::string& why) {
    MutexLock lock(&mu_);
    auto it = allocations_.find(d.allocation_id);
    if (it == allocations_.end()) return;
    std::string error = d.error;
    if (infrastructure) error += std::string(error.empty() ? "" : "; ") + why;
    Status st =
        HandleResourceExitLocked(*it->second, d.agent_id, d.exit_code, error, infrastructure);
    if (!st.ok()) spdlog::error("slurm: exit of {}: {}", d.allocation_id, st.ToString());
    ScheduleLocked();
  };
  listener.submit_failed = [this](const std::string& allocation_id, const Status& error) {
    MutexLock lock(&mu_);
    auto it = allocations_.find(allocation_id);
    if (it == allocations_.end()) return;
    AllocationRuntime& alloc = *it->second;
    if (alloc.state != AllocationRuntime::State::kPending) return;
    const TrialRuntime& t = *trials_.at(alloc.trial_id);
    std::string msg = "cannot submit Trial " + std::to_string(t.id) +
                      " to Slurm: " + std::string(error.message());
    AppendMasterLogLocked(t.id, t.task_id, msg);
    // Started nowhere: exits like a failed process, so max_restarts bounds the retries.
    alloc.state = AllocationRuntime::State::kAssigned;
    Status st = HandleAllocationExitLocked(alloc, -1, msg, false);
    if (!st.ok()) spdlog::error("slurm: {}", st.ToString());
    ScheduleLocked();
  };
  return slurm_->Start(std::move(listener));
}

void Master::SlurmPassLocked() {
  const slurm::SlurmConfig& cfg = slurm_->config();
  for (const std::string& id : pending_) {
    auto it = allocations_.find(id);
    if (it == allocations_.end()) continue;
    AllocationRuntime& alloc = *it->second;
    if (alloc.state != AllocationRuntime::State::kPending) continue;
    const TrialRuntime& t = *trials_.at(alloc.trial_id);
    const ExperimentRuntime& exp = *experiments_.at(t.experiment_id);
    std::string pool = PoolOfLocked(exp);
    if (!IsSlurmPoolLocked(pool) || slurm_->Tracks(id)) continue;
    slurm::JobRequest r;
    r.allocation_id = id;
    r.name = "det-trial-" + std::to_string(t.id);
    r.partition = cfg.PartitionOf(pool);
    r.slot_type = cfg.SlotTypeOf(r.partition);
    r.slots = alloc.slots;
    r.single_node = exp.config.resources.is_single_node.value_or(false);
    r.priority = static_cast<int>(exp.config.resources.priority.value_or(42));
    r.work_dir = cfg.job_storage_root + "/" + id;
    r.agent_path = cfg.agent_path;
    r.master_url = (config_.tls_cert.empty() ? "http://" : "https://") + cfg.master_host + ":" +
                   std::to_string(cfg.master_port);
    if (!config_.tls_cert.empty()) {
      // Absolute: the job runs in its own work dir, not the master's.
      std::error_code cert_ec;
      r.master_cert_file = std::filesystem::absolute(config_.tls_cert, cert_ec).string();
    }
    r.resource_pool = pool;
    r.python = cfg.python;
    r.harness_path = cfg.harness_path;
    r.agent_token_file = config_.agent_token_file;
    AppendMasterLogLocked(t.id, t.task_id,
                          "Submitting Trial " + std::to_string(t.id) + " to Slurm partition " +
                              r.partition + " (" + std::to_string(r.slots) + " " + r.slot_type +
                              " slot(s))");
    slurm_->Submit(std::move(r));
  }
}

void Master::SlurmAgentRegisteredLocked(const std::string& agent_id) {
  auto parsed = slurm::ParseAgentId(agent_id);
  if (!parsed) return;
  const std::string& job_id = parsed->first;
  auto owner = slurm_->AllocationOfJob(job_id);
  if (!owner) {
    spdlog::warn("slurm: agent {} belongs to job {}, which runs no allocation; cancelling it",
                 agent_id, job_id);
    slurm_->CancelJob(job_id);
    return;
  }
  auto it = allocations_.find(owner->first);
  if (it == allocations_.end()) return;
  AllocationRuntime& alloc = *it->second;
  // A re-registration (agent or master restart) was reconciled by RegisterAgent.
  if (alloc.state != AllocationRuntime::State::kPending) return;
  std::vector<scheduler::AgentSlots> parts;
  for (int64_t node = 0; node < owner->second; ++node) {
    std::optional<AgentService::Agent> a = agents_->Find(slurm::AgentIdFor(job_id, node));
    if (!a || !a->connected) return;  // the others are still starting
    scheduler::AgentSlots part;
    part.agent_id = a->id;
    for (const auto& s : a->slots) part.slot_ids.push_back(s.value("id", 0));
    parts.push_back(std::move(part));
  }
  pending_.erase(std::remove(pending_.begin(), pending_.end(), alloc.id), pending_.end());
  Status st = StartAllocationLocked(alloc, parts);
  if (!st.ok()) {
    spdlog::error("slurm: starting allocation {} on job {}: {}", alloc.id, job_id, st.ToString());
    Status ended = HandleAllocationExitLocked(alloc, -1, std::string(st.message()), true);
    if (!ended.ok()) spdlog::error("{}", ended.ToString());
  }
}

bool Master::DeferSlurmExitLocked(AllocationRuntime& alloc, const std::string& agent_id,
                                  int exit_code, const std::string& error) {
  // Exits the master asked for, and clean exits, need no verdict.
  if (exit_code == 0 || alloc.kill_requested || alloc.preempt) return false;
  if (!slurm::ParseAgentId(agent_id) || !slurm_->Tracks(alloc.id)) return false;
  slurm_->DeferExit({alloc.id, agent_id, exit_code, error});
  return true;
}

void Master::OverlaySlurmJobLocked(const ExperimentRuntime& exp, JobView* job) {
  std::string detail;
  bool any_pending = false, any_running = false;
  std::optional<int64_t> ahead;
  for (const auto& [request, trial_id] : exp.trial_by_request) {
    const TrialRuntime& t = *trials_.at(trial_id);
    if (t.allocation_id.empty()) continue;
    std::optional<SlurmService::JobInfo> info = slurm_->Job(t.allocation_id);
    if (!info) continue;
    std::string part = info->job_id.empty() ? "submitting" : "job " + info->job_id;
    if (info->status) {
      part += " " + info->status->state_text;
      std::string reason = slurm::DescribePendingReason(info->status->reason);
      if (info->status->state == slurm::JobState::kPending) {
        any_pending = true;
        if (!reason.empty()) part += " (" + reason.substr(reason.find(' ') + 1) + ")";
      } else if (info->status->state == slurm::JobState::kRunning) {
        any_running = true;
      }
    }
    if (info->jobs_ahead) ahead = ahead ? std::min(*ahead, *info->jobs_ahead) : *info->jobs_ahead;
    detail += (detail.empty() ? "Slurm " : ", ") + part;
  }
  job->rm_detail = detail;
  // Slurm's queue decides: the job waits while none of its Slurm jobs runs.
  if (any_pending && !any_running) {
    job->state = "STATE_QUEUED";
    job->scheduled = false;
    if (ahead) job->jobs_ahead = *ahead;
  }
}

void Master::SlurmPriorityChangedLocked(const ExperimentRuntime& exp) {
  int priority = static_cast<int>(exp.config.resources.priority.value_or(42));
  for (const auto& [request, trial_id] : exp.trial_by_request) {
    const TrialRuntime& t = *trials_.at(trial_id);
    if (!t.allocation_id.empty()) slurm_->SetPriority(t.allocation_id, priority);
  }
}

}  // namespace det::master::server
