// AllocationService: the Slurm resource manager. Every pool is a Slurm partition; each pending
// allocation becomes one Slurm job (SlurmService), whose per-node agents register as
// slurm-<job>-<node>; when all have, the allocation starts on them as on any agents. Slurm's
// cancellations and losses end allocations as infrastructure failures.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "master/server/allocation_service.h"
#include "master/server/slurm_service.h"

namespace det::master::server {

bool AllocationService::IsSlurmPool(const std::string& pool) const {
  // Under the Slurm resource manager every pool is a partition.
  return slurm_ != nullptr && !pool.empty();
}

void AllocationService::CreateSlurm() {
  const MasterConfig& config = *deps_.config;
  if (!config.slurm) return;
  slurm_ = std::make_unique<SlurmService>(*config.slurm, deps_.store, deps_.clock,
                                          SlurmService::ToolRunner(*config.slurm));
}

Status AllocationService::StartSlurm() {
  if (!slurm_) return Status::Ok();
  // Slurm's reports are decided on the loop, like an agent's.
  SlurmService::Listener listener;
  listener.job_ended = [this](const std::string& allocation_id, const slurm::JobStatus& s) {
    deps_.loop->Post([this, allocation_id, s]() ON_RUNTIME {
      AllocationRuntime* found = Find(allocation_id);
      if (found == nullptr || found->state == AllocationRuntime::State::kTerminated) return;
      AllocationRuntime& alloc = *found;
      bool lost = s.state == slurm::JobState::kUnknown;
      // A job that failed or completed without its agents reporting an exit counts against the
      // trial (max_restarts bounds a job that can never start); Slurm's own doing does not.
      bool infrastructure = lost || slurm::IsInfrastructureEnd(s.state);
      std::string error = "Slurm job " + s.job_id + (lost ? " was lost" : " ended " + s.state_text);
      if (!s.reason.empty() && s.reason != "None") error += " (" + s.reason + ")";
      Log(alloc, error);
      KillResources(alloc);
      Status st = HandleExit(alloc, -1, error, infrastructure);
      if (!st.ok()) spdlog::error("slurm: ending allocation {}: {}", allocation_id, st.ToString());
      RequestPass();
    });
  };
  listener.exit_verdict = [this](const SlurmService::DeferredExit& d, bool infrastructure,
                                 const std::string& why) {
    deps_.loop->Post([this, d, infrastructure, why]() ON_RUNTIME {
      AllocationRuntime* alloc = Find(d.allocation_id);
      if (alloc == nullptr) return;
      std::string error = d.error;
      if (infrastructure) error += std::string(error.empty() ? "" : "; ") + why;
      Status st = HandleResourceExit(*alloc, d.agent_id, d.exit_code, error, infrastructure);
      if (!st.ok()) spdlog::error("slurm: exit of {}: {}", d.allocation_id, st.ToString());
      RequestPass();
    });
  };
  listener.submit_failed = [this](const std::string& allocation_id, const Status& error) {
    deps_.loop->Post([this, allocation_id, error]() ON_RUNTIME {
      AllocationRuntime* alloc = Find(allocation_id);
      if (alloc == nullptr || alloc->state != AllocationRuntime::State::kPending) return;
      std::string msg = "cannot submit Trial " + std::to_string(alloc->trial_id) +
                        " to Slurm: " + std::string(error.message());
      Log(*alloc, msg);
      // Started nowhere: exits like a failed process, so max_restarts bounds the retries.
      SetState(*alloc, AllocationRuntime::State::kAssigned);
      Status st = HandleExit(*alloc, -1, msg, false);
      if (!st.ok()) spdlog::error("slurm: {}", st.ToString());
      RequestPass();
    });
  };
  return slurm_->Start(std::move(listener));
}

void AllocationService::SlurmPass() {
  const slurm::SlurmConfig& cfg = slurm_->config();
  const MasterConfig& config = *deps_.config;
  for (const std::string& id : pending_) {
    AllocationRuntime* found = Find(id);
    if (found == nullptr || found->state != AllocationRuntime::State::kPending) continue;
    AllocationRuntime& alloc = *found;
    if (Held(alloc)) continue;
    const JobSpec* job = JobOf(alloc);
    std::string pool = PoolOf(alloc);
    if (!IsSlurmPool(pool) || slurm_->Tracks(id)) continue;
    slurm::JobRequest r;
    r.allocation_id = id;
    r.name = "det-trial-" + std::to_string(alloc.trial_id);
    r.partition = cfg.PartitionOf(pool);
    r.slot_type = cfg.SlotTypeOf(r.partition);
    r.slots = alloc.slots;
    r.single_node = job != nullptr && job->single_node;
    r.priority = static_cast<int>(job && job->priority ? *job->priority : 42);
    r.work_dir = cfg.job_storage_root + "/" + id;
    r.agent_path = cfg.agent_path;
    r.master_url = (config.tls_cert.empty() ? "http://" : "https://") + cfg.master_host + ":" +
                   std::to_string(cfg.master_port);
    if (!config.tls_cert.empty()) {
      // Absolute: the job runs in its own work dir, not the master's.
      std::error_code cert_ec;
      r.master_cert_file = std::filesystem::absolute(config.tls_cert, cert_ec).string();
    }
    r.resource_pool = pool;
    r.python = cfg.python;
    r.harness_path = cfg.harness_path;
    r.agent_token_file = config.agent_token_file;
    Log(alloc, "Submitting Trial " + std::to_string(alloc.trial_id) + " to Slurm partition " +
                   r.partition + " (" + std::to_string(r.slots) + " " + r.slot_type + " slot(s))");
    slurm_->Submit(std::move(r));
  }
}

void AllocationService::SlurmAgentRegistered(const std::string& agent_id) {
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
  AllocationRuntime* found = Find(owner->first);
  if (found == nullptr) return;
  AllocationRuntime& alloc = *found;
  // A re-registration (agent or master restart) was reconciled by RegisterAgent.
  if (alloc.state != AllocationRuntime::State::kPending) return;
  std::vector<scheduler::AgentSlots> parts;
  for (int64_t node = 0; node < owner->second; ++node) {
    std::optional<AgentService::Agent> a = deps_.agents->Find(slurm::AgentIdFor(job_id, node));
    if (!a || !a->connected) return;  // the others are still starting
    scheduler::AgentSlots part;
    part.agent_id = a->id;
    for (const auto& s : a->slots) part.slot_ids.push_back(s.value("id", 0));
    parts.push_back(std::move(part));
  }
  ErasePending(alloc.id);
  Status st = Start(alloc, parts);
  if (!st.ok()) {
    spdlog::error("slurm: starting allocation {} on job {}: {}", alloc.id, job_id, st.ToString());
    Status ended = HandleExit(alloc, -1, std::string(st.message()), true);
    if (!ended.ok()) spdlog::error("{}", ended.ToString());
  }
}

bool AllocationService::DeferSlurmExit(AllocationRuntime& alloc, const std::string& agent_id,
                                       int exit_code, const std::string& error) {
  // Exits the master asked for, and clean exits, need no verdict.
  if (exit_code == 0 || alloc.kill_requested || alloc.preempt) return false;
  if (!slurm::ParseAgentId(agent_id) || !slurm_->Tracks(alloc.id)) return false;
  slurm_->DeferExit({alloc.id, agent_id, exit_code, error});
  return true;
}

void AllocationService::OverlaySlurmJob(const std::string& job_id, JobView* job) {
  std::string detail;
  bool any_pending = false, any_running = false;
  std::optional<int64_t> ahead;
  for (const auto& [id, alloc] : allocations_) {
    if (alloc->job_id != job_id || alloc->state == AllocationRuntime::State::kTerminated) continue;
    std::optional<SlurmService::JobInfo> info = slurm_->Job(id);
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

void AllocationService::SlurmPriorityChanged(const std::string& job_id, int priority) {
  for (const auto& [id, alloc] : allocations_) {
    if (alloc->job_id == job_id && alloc->state != AllocationRuntime::State::kTerminated) {
      slurm_->SetPriority(id, priority);
    }
  }
}

}  // namespace det::master::server
