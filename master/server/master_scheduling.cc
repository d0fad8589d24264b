// Master: allocations and the scheduling loop (one pass of snapshot -> the pure pool schedulers ->
// starts and releases per batch of changes, and the tick), starting allocations on one or several
// agents, rendezvous, and the job queue.
#include <spdlog/spdlog.h>

#include <functional>
#include <set>

#include "master/scheduler/job_queue.h"
#include "master/scheduler/schedule.h"
#include "master/server/agent_admin_service.h"
#include "master/server/container_spec.h"
#include "master/server/master.h"
#include "master/server/master_runtime.h"
#include "master/server/passwords.h"
#include "master/server/provisioner_service.h"
#include "master/server/task_service.h"
#include "master/store/session_token.h"

namespace det::master::server {

using core::RunState;
using nlohmann::json;

namespace {

// environment.environment_variables is a list of "K=V" or a per-device map of such lists.
void AddConfigEnv(const json& config, const std::string& device, json* env) {
  if (!config.contains("environment") || !config["environment"].is_object()) return;
  const json& ev = config["environment"].value("environment_variables", json());
  const json* list = &ev;
  if (ev.is_object()) {
    if (!ev.contains(device)) return;
    list = &ev[device];
  }
  if (!list->is_array()) return;
  for (const auto& item : *list) {
    if (!item.is_string()) continue;
    std::string kv = item.get<std::string>();
    size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    (*env)[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
}

std::string PoolNames(const scheduler::ResourcePoolsConfig& pools) {
  std::string names;
  for (const auto& p : pools.pools) names += (names.empty() ? "" : ", ") + p.pool_name;
  return names;
}

}  // namespace

std::string Master::ResourcesId(const AllocationRuntime& alloc, size_t rank) {
  return rank == 0 ? alloc.id : alloc.id + "-" + std::to_string(rank);
}

std::string Master::PoolOfLocked(const ExperimentRuntime& exp) const {
  scheduler::AllocationRequest probe;
  probe.pool = exp.config.resources.resource_pool;
  probe.slots = static_cast<int>(exp.config.resources.slots_per_trial);
  return scheduler::ResolvePool(config_.pools, probe);
}

Status Master::CheckPoolExists(const std::string& pool) const {
  if (pool.empty() || config_.pools.Find(pool) != nullptr) return Status::Ok();
  return InvalidArgument("resources.resource_pool: no resource pool named '" + pool +
                         "' (pools: " + PoolNames(config_.pools) + ")");
}

scheduler::ClusterSnapshot Master::SnapshotLocked() const {
  scheduler::ClusterSnapshot snap;
  for (const AgentService::Agent& a : agents_->List()) {
    if (!a.connected) continue;
    scheduler::Agent agent;
    agent.id = a.id;
    agent.pool = a.resource_pool;
    // Operator-disabled agents and slots (AgentAdminService) take nothing new.
    const AgentAdminState admin = agent_admin_->Agent(a.id);
    agent.enabled = admin.enabled;
    agent.draining = admin.draining;
    // An agent the provisioner is stopping takes nothing new.
    if (provisioner_ && provisioner_->Stopping(a.id)) agent.enabled = false;
    for (const auto& s : a.slots) {
      agent.slot_ids.push_back(s.value("id", 0));
      if (!agent_admin_->SlotEnabled(a.id, s.value("id", 0))) {
        agent.used_slot_ids.push_back(s.value("id", 0));
      }
    }
    if (const auto* pool = config_.pools.Find(a.resource_pool)) {
      agent.max_zero_slot_containers = pool->max_aux_containers_per_agent;
    }
    snap.agents.push_back(std::move(agent));
  }
  for (const auto& [id, exp] : experiments_) {
    if (core::IsTerminal(exp->state)) continue;
    scheduler::Job job;
    job.id = exp->job_id;
    if (exp->config.resources.max_slots) {
      job.max_slots = static_cast<int>(*exp->config.resources.max_slots);
    }
    job.weight = exp->config.resources.weight;
    if (exp->config.resources.priority) {
      job.priority = static_cast<int>(*exp->config.resources.priority);
    }
    job.submission_time_us = exp->submission_time;
    job.position = exp->queue_position;
    snap.jobs.push_back(std::move(job));
  }
  for (const auto& [id, a] : allocations_) {
    if (a->state == AllocationRuntime::State::kTerminated) continue;
    const TrialRuntime& t = *trials_.at(a->trial_id);
    const ExperimentRuntime& exp = *experiments_.at(t.experiment_id);
    scheduler::AllocationRequest r;
    r.id = id;
    r.job_id = exp.job_id;
    r.pool = PoolOfLocked(exp);
    r.slots = static_cast<int>(a->slots);
    r.single_node = exp.config.resources.is_single_node.value_or(false);
    r.request_time_us = a->queued_at;
    r.backfilled = a->backfilled;
    if (a->state != AllocationRuntime::State::kPending) {
      std::vector<scheduler::AgentSlots> held;
      for (const auto& res : a->resources) {
        if (!res.exited) held.push_back({res.agent_id, res.slot_ids});
      }
      r.allocated = std::move(held);
    }
    snap.requests.push_back(std::move(r));
  }
  tasks_->AddToSnapshot(&snap);  // commands, notebooks, shells, TensorBoards wait in the same queue
  return snap;
}

std::unique_ptr<Master::AllocationRuntime> Master::NewAllocation(const ExperimentRuntime& exp,
                                                                 TrialRuntime& trial) const {
  trial.run_id += 1;
  auto alloc = std::make_unique<AllocationRuntime>();
  alloc->id = trial.task_id + "." + std::to_string(trial.run_id);
  alloc->task_id = trial.task_id;
  alloc->trial_id = trial.id;
  alloc->slots = exp.config.resources.slots_per_trial;
  alloc->token = NewToken();
  alloc->token_digest = store::AllocationTokenDigest(alloc->token);
  alloc->queued_at = Now();
  return alloc;
}

store::AllocationRow Master::AllocationRowOf(const AllocationRuntime& alloc) {
  store::AllocationRow row;
  row.allocation_id = alloc.id;
  row.task_id = alloc.task_id;
  row.trial_id = alloc.trial_id;
  row.state = std::string(core::AllocationStateName(alloc.state));
  row.token = alloc.token_digest;
  row.slots = alloc.slots;
  row.start_time = alloc.queued_at;
  for (const auto& res : alloc.resources) {
    if (row.agent_id.empty()) row.agent_id = res.agent_id;
    row.resources.push_back({{"agentId", res.agent_id}, {"slotIds", res.slot_ids}});
  }
  return row;
}

store::TaskLogRow Master::MasterLogRow(int64_t trial_id, const std::string& task_id,
                                       const std::string& message) const {
  store::TaskLogRow r;
  r.trial_id = trial_id;
  r.task_id = task_id;
  r.timestamp = Now();
  r.level = "LOG_LEVEL_INFO";
  r.stdtype = "stdout";
  r.source = "master";
  r.log = message + "\n";
  return r;
}

std::string Master::SchedulingMessage(const TrialRuntime& trial, const AllocationRuntime& alloc) {
  return "Scheduling Trial " + std::to_string(trial.id) + " (Experiment " +
         std::to_string(trial.experiment_id) + ") (id: " + alloc.id + ")";
}

void Master::PublishAllocationLocked(TrialRuntime& trial,
                                     std::unique_ptr<AllocationRuntime> alloc) {
  auth_->RegisterAllocationDigest(alloc->token_digest, alloc->id, trial.id);
  trial.allocation_id = alloc->id;
  pending_.push_back(alloc->id);
  allocations_[alloc->id] = std::move(alloc);
  ScheduleLocked();
}

Status Master::RequestAllocationLocked(TrialRuntime& trial) {
  return RequestAllocationsLocked({&trial});
}

Status Master::RequestAllocationsLocked(const std::vector<TrialRuntime*>& trials) {
  store::DecisionWrites w;
  std::vector<std::pair<TrialRuntime*, std::unique_ptr<AllocationRuntime>>> made;
  for (TrialRuntime* t : trials) {
    if (!t->allocation_id.empty()) continue;
    auto alloc = NewAllocation(*experiments_.at(t->experiment_id), *t);
    w.trials.push_back({t->id, std::nullopt, t->run_id, t->restarts, std::nullopt});
    w.allocations.push_back(AllocationRowOf(*alloc));
    w.logs.push_back(MasterLogRow(t->id, t->task_id, SchedulingMessage(*t, *alloc)));
    made.emplace_back(t, std::move(alloc));
  }
  if (made.empty()) return Status::Ok();
  if (Status st = store_->ApplyDecision(w).status(); !st.ok()) {
    for (auto& [t, alloc] : made) t->run_id -= 1;
    return st;
  }
  for (auto& [t, alloc] : made) {
    PublishAllocationLocked(*t, std::move(alloc));
    NotifyTrialLocked(t->id);
  }
  return Status::Ok();
}

void Master::ScheduleLocked() { scheduling_->Request(); }

void Master::SchedulePassNowLocked() {
  scheduling_->Served();
  SchedulePassLocked();
}

void Master::SchedulePassLocked() {
  // nothing waits: no start, and no reason to preempt
  if (pending_.empty() && !tasks_->HasPending()) return;
  if (slurm_) SlurmPassLocked();  // Slurm pools: each pending allocation becomes a job
  // With no agent in contact nothing can start and nothing runs to preempt: a queue of 20,000
  // trials on an empty cluster costs no pass.
  std::vector<AgentService::Agent> agents = agents_->List();
  if (std::none_of(agents.begin(), agents.end(),
                   [](const AgentService::Agent& a) { return a.connected; })) {
    return;
  }
  scheduler::ClusterSnapshot snap = SnapshotLocked();
  if (slurm_) {
    // Slurm places the work of its pools; their agents serve one allocation each.
    std::set<std::string> slurm_pools;
    for (const auto& pool : config_.pools.pools) {
      if (IsSlurmPoolLocked(pool.pool_name)) slurm_pools.insert(pool.pool_name);
    }
    std::erase_if(snap.agents,
                  [&](const scheduler::Agent& a) { return slurm_pools.count(a.pool) > 0; });
    std::erase_if(snap.requests, [&](const scheduler::AllocationRequest& r) {
      return slurm_pools.count(r.pool) > 0;
    });
  }
  std::map<std::string, scheduler::ScheduleDecision> decisions =
      scheduler::ScheduleAll(config_.pools, snap);
  for (auto& [pool, decision] : decisions) {
    for (const std::string& id : decision.to_release) {
      auto it = allocations_.find(id);
      if (it == allocations_.end() || it->second->preempt) continue;
      AllocationRuntime& alloc = *it->second;
      alloc.released = true;
      const TrialRuntime& t = *trials_.at(alloc.trial_id);
      AppendMasterLogLocked(t.id, t.task_id,
                            "Trial " + std::to_string(t.id) + " was preempted by the scheduler " +
                                "of resource pool " + pool + " for higher-priority work");
      TerminateAllocationLocked(alloc, true);
    }
    for (const scheduler::Allocation& a : decision.to_allocate) {
      auto it = allocations_.find(a.request_id);
      if (it == allocations_.end() && tasks_->Owns(a.request_id)) {
        Status st = tasks_->Start(a.request_id, a.agents);
        if (!st.ok()) spdlog::error("cannot start task {}: {}", a.request_id, st.ToString());
        continue;
      }
      if (it == allocations_.end() || it->second->state != AllocationRuntime::State::kPending) {
        continue;
      }
      AllocationRuntime& alloc = *it->second;
      pending_.erase(std::remove(pending_.begin(), pending_.end(), alloc.id), pending_.end());
      alloc.backfilled = a.backfilled;
      Status st = StartAllocationLocked(alloc, a.agents);
      if (!st.ok()) spdlog::error("cannot start allocation {}: {}", alloc.id, st.ToString());
    }
  }
}

Status Master::StartAllocationLocked(AllocationRuntime& alloc,
                                     const std::vector<scheduler::AgentSlots>& parts) {
  if (parts.empty()) return Internal("allocation " + alloc.id + ": placed on no agent");
  TrialRuntime& trial = *trials_[alloc.trial_id];
  ExperimentRuntime& exp = *experiments_[trial.experiment_id];
  DET_ASSIGN_OR_RETURN(store::TrialRow trow, store_->GetTrial(trial.id));
  DET_ASSIGN_OR_RETURN(std::optional<store::CheckpointRow> latest,
                       checkpoints_->LatestCompleted(trial.id));
  DET_ASSIGN_OR_RETURN(std::string user_token, auth_->CreateSession(exp.owner_id));

  json addrs = json::array();
  json slot_counts = json::array();
  std::string device = "cpu";
  for (size_t rank = 0; rank < parts.size(); ++rank) {
    std::optional<AgentService::Agent> agent = agents_->Find(parts[rank].agent_id);
    if (!agent)
      return Internal("allocation " + alloc.id + ": agent " + parts[rank].agent_id +
                      " is not registered");
    addrs.push_back(agent->address);
    slot_counts.push_back(parts[rank].slot_ids.size());
    if (rank > 0) continue;
    for (const auto& s : agent->slots) {
      if (s.value("type", "cpu") == "cuda") device = "cuda";
    }
  }
  // An image other than the built-in default runs in a container (docs/operations.md).
  DET_ASSIGN_OR_RETURN(std::optional<json> container, ContainerSpecFor(exp.config, device));
  if (alloc.token.empty()) {
    // Restored while pending: the store kept only the digest, and no process ever got the token.
    auth_->EndAllocationDigest(alloc.token_digest);
    alloc.token = NewToken();
    alloc.token_digest = store::AllocationTokenDigest(alloc.token);
    auth_->RegisterAllocationDigest(alloc.token_digest, alloc.id, alloc.trial_id);
  }
  json env = json::object();
  AddConfigEnv(exp.config.defaulted, device, &env);
  env["DET_TASK_ID"] = alloc.task_id;
  env["DET_ALLOCATION_ID"] = alloc.id;
  env["DET_SESSION_TOKEN"] = alloc.token;
  env["DET_USER"] = exp.username;
  env["DET_USER_TOKEN"] = user_token;
  env["DET_TASK_TYPE"] = "TRIAL";
  env["DET_EXPERIMENT_ID"] = std::to_string(exp.id);
  env["DET_TRIAL_ID"] = std::to_string(trial.id);
  env["DET_TRIAL_RUN_ID"] = std::to_string(trial.run_id);
  env["DET_TRIAL_SEED"] = std::to_string(trow.seed);
  env["DET_HPARAMS"] = trow.hparams.dump();
  env["DET_EXPERIMENT_CONFIG"] = exp.config.defaulted.dump();
  env["DET_STEPS_COMPLETED"] = std::to_string(latest ? latest->steps_completed : 0);
  env["DET_CLUSTER_ID"] = cluster_id_;
  env["DET_MASTER_ID"] = master_id_;
  env["DET_CONTAINER_ADDRS"] = addrs.dump();
  env["DET_CONTAINER_SLOT_COUNTS"] = slot_counts.dump();
  if (parts.size() > 1) {
    // Every node of this allocation must agree on the ports; they differ between allocations
    // because agents on one host share its network.
    int base = 30000 + static_cast<int>(std::hash<std::string>{}(alloc.id) % 10000) * 2;
    env["C10D_PORT"] = std::to_string(base);
    env["INTER_TRAIN_PROCESS_COMM_PORT_1"] = std::to_string(base + 1);
  }
  if (!trial.searcher().ops.empty()) {
    // The answer GET .../searcher/operation gives now: the harness starts training without
    // asking (docs/operations.md, "Trial start cost"). Only this trial's own report changes it.
    env["DET_SEARCHER_OP"] = json{{"trialId", trial.id},
                                  {"allocationId", alloc.id},
                                  {"requestId", trial.request_id},
                                  {"length", std::to_string(trial.searcher().ops.front())}}
                                 .dump();
  }
  if (latest) {
    env["DET_LATEST_CHECKPOINT"] = latest->uuid;
  } else if (!trow.warm_start_checkpoint_uuid.empty()) {
    // Warm start: the weights of another trial, while this trial's own count starts at zero.
    env["DET_LATEST_CHECKPOINT"] = trow.warm_start_checkpoint_uuid;
  }

  AllocationRuntime assigned_view = alloc;
  assigned_view.state = AllocationRuntime::State::kAssigned;
  assigned_view.resources.clear();
  for (const auto& p : parts) assigned_view.resources.push_back({p.agent_id, p.slot_ids});
  DET_RETURN_IF_ERROR(store_->UpsertAllocation(AllocationRowOf(assigned_view)));
  alloc.state = assigned_view.state;
  alloc.resources = std::move(assigned_view.resources);
  NotifyAllocationLocked(alloc.id);
  std::string where;
  for (size_t rank = 0; rank < parts.size(); ++rank) {
    const std::string& agent_id = parts[rank].agent_id;
    json renv = env;
    renv["DET_RESOURCES_ID"] = ResourcesId(alloc, rank);
    renv["DET_CONTAINER_RANK"] = std::to_string(rank);
    json start = {{"type", "start"},
                  {"allocationId", alloc.id},
                  {"taskId", alloc.task_id},
                  {"slotIds", parts[rank].slot_ids},
                  {"entrypoint", exp.config.entrypoint},
                  {"env", renv}};
    if (container) start["container"] = *container;
    agents_->Push(agent_id, std::move(start));
    where += (where.empty() ? "" : ", ") + agent_id;
  }
  AppendMasterLogLocked(trial.id, trial.task_id,
                        "Trial " + std::to_string(trial.id) + " (Experiment " +
                            std::to_string(exp.id) + ") was assigned to agent" +
                            (parts.size() > 1 ? "s " : " ") + where);
  return Status::Ok();
}

void Master::KillResourcesLocked(AllocationRuntime& alloc) {
  for (const auto& res : alloc.resources) {
    if (res.exited) continue;
    agents_->Push(res.agent_id, {{"type", "kill"}, {"allocationId", alloc.id}});
  }
}

Status Master::HandleResourceExitLocked(AllocationRuntime& alloc, const std::string& agent_id,
                                        int exit_code, const std::string& error,
                                        bool infrastructure) {
  if (alloc.state == AllocationRuntime::State::kTerminated) return Status::Ok();
  bool any_running = false;
  for (auto& res : alloc.resources) {
    if (res.agent_id == agent_id) res.exited = true;
    any_running = any_running || !res.exited;
  }
  if (exit_code != 0 && !alloc.exit_code) {
    alloc.exit_code = exit_code;
    alloc.exit_error = error;
    // One failed process fails the allocation: the others are torn down with it.
    if (any_running) KillResourcesLocked(alloc);
  }
  if (any_running) return Status::Ok();
  return HandleAllocationExitLocked(alloc, alloc.exit_code.value_or(0),
                                    alloc.exit_code ? alloc.exit_error : error, infrastructure);
}

void Master::Rendezvous(const Principal& who, const std::string& allocation_id,
                        const std::string& resources_id, int64_t timeout_ms, Reply<json> reply) {
  if (who.is_allocation && who.allocation_id != allocation_id) {
    reply(PermissionDenied("allocation " + who.allocation_id + " may not rendezvous for " +
                           allocation_id));
    return;
  }
  MutexLock lock(&mu_);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto step = std::make_shared<std::function<bool(bool)>>([this, allocation_id, resources_id,
                                                           reply = std::move(reply)](
                                                              bool final) REQUIRES(mu_) {
    auto it = allocations_.find(allocation_id);
    if (it == allocations_.end() || it->second->state == AllocationRuntime::State::kTerminated) {
      reply(NotFound("allocation " + allocation_id + " is not running"));
      return true;
    }
    const AllocationRuntime& alloc = *it->second;
    std::optional<size_t> rank;
    bool all_started = !alloc.resources.empty();
    for (size_t i = 0; i < alloc.resources.size(); ++i) {
      if (ResourcesId(alloc, i) == resources_id) rank = i;
      all_started = all_started && alloc.resources[i].started;
    }
    if (!alloc.resources.empty() && !rank) {
      reply(NotFound("allocation " + allocation_id + " has no resources " + resources_id));
      return true;
    }
    if (all_started) {
      json addrs = json::array(), slots = json::array();
      for (const auto& res : alloc.resources) {
        std::optional<AgentService::Agent> agent = agents_->Find(res.agent_id);
        addrs.push_back(agent ? agent->address : "127.0.0.1");
        slots.push_back(res.slot_ids.size());
      }
      reply(json{{"rendezvousInfo", {{"addresses", addrs}, {"rank", *rank}, {"slots", slots}}}});
      return true;
    }
    if (!final) return false;
    reply(Unavailable("rendezvous of allocation " + allocation_id +
                      " timed out: not every process has started yet; retry"));
    return true;
  });
  LongPollLocked("alloc:" + allocation_id, deadline, std::move(step));
}

std::vector<JobView> Master::ListJobs(const std::string& pool_filter) {
  MutexLock lock(&mu_);
  scheduler::ClusterSnapshot snap = SnapshotLocked();
  std::map<std::string, const ExperimentRuntime*> by_job;
  for (const auto& [id, exp] : experiments_) by_job[exp->job_id] = exp.get();
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
  for (const auto& pool : config_.pools.pools) {
    if (!pool_filter.empty() && pool.pool_name != pool_filter) continue;
    scheduler::ClusterSnapshot in_pool = snap;
    std::erase_if(in_pool.requests,
                  [&](const scheduler::AllocationRequest& r) { return r.pool != pool.pool_name; });
    std::vector<std::string> backfilled;
    for (const auto& r : in_pool.requests) {
      if (r.backfilled) backfilled.push_back(r.id);
    }
    for (const scheduler::JobQueueEntry& e : scheduler::JobQueueInfo(pool, in_pool, backfilled)) {
      auto it = by_job.find(e.job_id);
      if (it == by_job.end()) {
        // A command, notebook, shell or TensorBoard.
        std::optional<TaskService::JobInfo> task = tasks_->Job(e.job_id);
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
      const ExperimentRuntime& exp = *it->second;
      JobView j = queue_view(e, pool.pool_name);
      j.experiment_id = exp.id;
      j.name = exp.config.name;
      j.username = exp.username;
      j.submission_time = exp.submission_time;
      if (slurm_) OverlaySlurmJobLocked(exp, &j);
      if (provisioner_ && e.state == scheduler::JobQueueState::kQueued) {
        j.rm_detail = ProvisionerJobDetail(*provisioner_, pool.pool_name);
      }
      jobs.push_back(std::move(j));
    }
  }
  return jobs;
}

Status Master::UpdateJob(const std::string& job_id, const json& update) {
  // Answers once the searcher state this call changed is stored (after mu_ is released).
  SearcherJournalService::AwaitScope stored(searcher_journal_.get());
  MutexLock lock(&mu_);
  ExperimentRuntime* exp = nullptr;
  for (auto& [id, e] : experiments_) {
    if (e->job_id == job_id && !core::IsTerminal(e->state)) exp = e.get();
  }
  if (exp == nullptr && tasks_->Job(job_id)) {
    // A command's, notebook's, shell's or TensorBoard's job.
    DET_RETURN_IF_ERROR(tasks_->UpdateJob(job_id, update));
    ScheduleLocked();
    return Status::Ok();
  }
  if (exp == nullptr) return NotFound("job " + job_id + " not found among active jobs");
  std::string pool_name = PoolOfLocked(*exp);
  const scheduler::PoolConfig* pool = config_.pools.Find(pool_name);
  if (pool == nullptr) {
    return FailedPrecondition("job " + job_id + ": no resource pool " + pool_name);
  }
  scheduler::ClusterSnapshot snap = SnapshotLocked();
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
    DET_RETURN_IF_ERROR(scheduler::CheckResourcePoolChange(config_.pools, true, target));
    resources["resource_pool"] = target;
  } else if (const json* a = anchor("aheadOf", "ahead_of"); a || anchor("behindOf", "behind_of")) {
    bool ahead = a != nullptr;
    const json* other = ahead ? a : anchor("behindOf", "behind_of");
    if (!other->is_string()) {
      return InvalidArgument(std::string(ahead ? "aheadOf" : "behindOf") + ": must be a job id");
    }
    std::erase_if(snap.requests,
                  [&](const scheduler::AllocationRequest& r) { return r.pool != pool_name; });
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
  int64_t exp_id = exp->id;
  bool pool_change = resources.contains("resource_pool");
  if (!resources.empty()) {
    lock.Unlock();
    Status patched = PatchExperiment(exp_id, {{"resources", resources}});
    lock.Lock();
    DET_RETURN_IF_ERROR(patched);
  }
  auto it = experiments_.find(exp_id);
  if (it == experiments_.end()) return Status::Ok();
  exp = it->second.get();
  if (position_set) exp->queue_position = new_position;
  if (slurm_ && resources.contains("priority")) SlurmPriorityChangedLocked(*exp);
  DET_RETURN_IF_ERROR(PersistSnapshotLocked(*exp));
  if (pool_change) {
    // Running work moves by the usual graceful preemption; it is re-queued in the new pool.
    for (auto& [rid, tid] : exp->trial_by_request) {
      TrialRuntime& t = *trials_[tid];
      if (t.allocation_id.empty()) continue;
      AllocationRuntime& alloc = *allocations_[t.allocation_id];
      if (alloc.state == AllocationRuntime::State::kPending) continue;
      alloc.released = true;
      TerminateAllocationLocked(alloc, true);
    }
  }
  ScheduleLocked();
  return Status::Ok();
}

}  // namespace det::master::server
