// AllocationService: the scheduling pass (a snapshot of the cluster through the pure pool
// schedulers, then starts and releases) and starting an allocation on one or several agents.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <set>

#include "master/scheduler/schedule.h"
#include "master/server/agent_admin_service.h"
#include "master/server/allocation_service.h"
#include "master/server/passwords.h"
#include "master/server/provisioner_service.h"
#include "master/server/task_service.h"
#include "master/store/session_token.h"

namespace det::master::server {

using nlohmann::json;

scheduler::ClusterSnapshot AllocationService::Snapshot() const {
  const scheduler::ResourcePoolsConfig& pools = deps_.config->pools;
  scheduler::ClusterSnapshot snap;
  for (const AgentService::Agent& a : deps_.agents->List()) {
    if (!a.connected) continue;
    scheduler::Agent agent;
    agent.id = a.id;
    agent.pool = a.resource_pool;
    // Operator-disabled agents and slots (AgentAdminService) take nothing new.
    const AgentAdminState admin = deps_.agent_admin->Agent(a.id);
    agent.enabled = admin.enabled;
    agent.draining = admin.draining;
    // An agent the provisioner is stopping takes nothing new.
    if (deps_.provisioner && deps_.provisioner->Stopping(a.id)) agent.enabled = false;
    for (const auto& s : a.slots) {
      agent.slot_ids.push_back(s.value("id", 0));
      if (!deps_.agent_admin->SlotEnabled(a.id, s.value("id", 0))) {
        agent.used_slot_ids.push_back(s.value("id", 0));
      }
    }
    if (const auto* pool = pools.Find(a.resource_pool)) {
      agent.max_zero_slot_containers = pool->max_aux_containers_per_agent;
    }
    snap.agents.push_back(std::move(agent));
  }
  for (const auto& [id, spec] : jobs_) {
    if (spec.terminal) continue;
    scheduler::Job job;
    job.id = spec.job_id;
    if (spec.max_slots) job.max_slots = static_cast<int>(*spec.max_slots);
    job.weight = spec.weight;
    if (spec.priority) job.priority = static_cast<int>(*spec.priority);
    job.submission_time_us = spec.submission_time;
    job.position = spec.position;
    snap.jobs.push_back(std::move(job));
  }
  for (const auto& [id, a] : allocations_) {
    if (a->state == AllocationRuntime::State::kTerminated) continue;
    if (Held(*a)) continue;
    const JobSpec* spec = JobOf(*a);
    scheduler::AllocationRequest r;
    r.id = id;
    r.job_id = a->job_id;
    r.pool = PoolOf(*a);
    r.slots = static_cast<int>(a->slots);
    r.single_node = spec != nullptr && spec->single_node;
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
  // Commands, notebooks, shells, TensorBoards wait in the same queue.
  deps_.tasks->AddToSnapshot(&snap);
  return snap;
}

void AllocationService::SchedulePassNow() {
  deps_.loop->PassServed();
  SchedulePass();
}

void AllocationService::SchedulePass() {
  // nothing waits: no start, and no reason to preempt
  if (pending_.empty() && !deps_.tasks->HasPending()) return;
  if (slurm_) SlurmPass();  // Slurm pools: each pending allocation becomes a job
  // With no agent in contact nothing can start and nothing runs to preempt: a queue of 20,000
  // trials on an empty cluster costs no pass.
  std::vector<AgentService::Agent> agents = deps_.agents->List();
  if (std::none_of(agents.begin(), agents.end(),
                   [](const AgentService::Agent& a) { return a.connected; })) {
    return;
  }
  scheduler::ClusterSnapshot snap = Snapshot();
  if (slurm_) {
    // Slurm places the work of its pools; their agents serve one allocation each.
    std::set<std::string> slurm_pools;
    for (const auto& pool : deps_.config->pools.pools) {
      if (IsSlurmPool(pool.pool_name)) slurm_pools.insert(pool.pool_name);
    }
    std::erase_if(snap.agents,
                  [&](const scheduler::Agent& a) { return slurm_pools.count(a.pool) > 0; });
    std::erase_if(snap.requests, [&](const scheduler::AllocationRequest& r) {
      return slurm_pools.count(r.pool) > 0;
    });
  }
  std::map<std::string, scheduler::ScheduleDecision> decisions =
      scheduler::ScheduleAll(deps_.config->pools, snap);
  for (auto& [pool, decision] : decisions) {
    for (const std::string& id : decision.to_release) {
      AllocationRuntime* alloc = Find(id);
      if (alloc == nullptr || alloc->preempt) continue;
      alloc->released = true;
      Log(*alloc, "Trial " + std::to_string(alloc->trial_id) +
                      " was preempted by the scheduler of resource pool " + pool +
                      " for higher-priority work");
      Terminate(id, true);
    }
    for (const scheduler::Allocation& a : decision.to_allocate) {
      AllocationRuntime* alloc = Find(a.request_id);
      if (alloc == nullptr && deps_.tasks->Owns(a.request_id)) {
        Status st = deps_.tasks->Start(a.request_id, a.agents);
        if (!st.ok()) spdlog::error("cannot start task {}: {}", a.request_id, st.ToString());
        continue;
      }
      if (alloc == nullptr || alloc->state != AllocationRuntime::State::kPending) continue;
      ErasePending(alloc->id);
      alloc->backfilled = a.backfilled;
      Status st = Start(*alloc, a.agents);
      if (!st.ok()) spdlog::error("cannot start allocation {}: {}", alloc->id, st.ToString());
    }
  }
}

Status AllocationService::Start(AllocationRuntime& alloc,
                                const std::vector<scheduler::AgentSlots>& parts) {
  if (parts.empty()) return Internal("allocation " + alloc.id + ": placed on no agent");
  json addrs = json::array();
  json slot_counts = json::array();
  std::string device = "cpu";
  for (size_t rank = 0; rank < parts.size(); ++rank) {
    std::optional<AgentService::Agent> agent = deps_.agents->Find(parts[rank].agent_id);
    if (!agent) {
      return Internal("allocation " + alloc.id + ": agent " + parts[rank].agent_id +
                      " is not registered");
    }
    addrs.push_back(agent->address);
    slot_counts.push_back(parts[rank].slot_ids.size());
    if (rank > 0) continue;
    for (const auto& s : agent->slots) {
      if (s.value("type", "cpu") == "cuda") device = "cuda";
    }
  }
  DET_ASSIGN_OR_RETURN(TrialLaunch launch, owner_->LaunchOf(alloc, device));
  if (alloc.token.empty()) {
    // Pending until now, so no process ever got a token; one restored from an earlier version's
    // pending row has a stored digest, which is refused from now on.
    if (!alloc.token_digest.empty()) deps_.auth->EndAllocationDigest(alloc.token_digest);
    alloc.token = NewToken();
    alloc.token_digest = store::AllocationTokenDigest(alloc.token);
    deps_.auth->RegisterAllocationDigest(alloc.token_digest, alloc.id, alloc.trial_id);
  }
  json& env = launch.env;
  env["DET_TASK_ID"] = alloc.task_id;
  env["DET_ALLOCATION_ID"] = alloc.id;
  env["DET_SESSION_TOKEN"] = alloc.token;
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

  AllocationRuntime assigned_view = alloc;
  assigned_view.state = AllocationRuntime::State::kAssigned;
  assigned_view.resources.clear();
  for (const auto& p : parts) assigned_view.resources.push_back({p.agent_id, p.slot_ids});
  store::DecisionWrites w;
  w.allocations.push_back(RowOf(assigned_view));
  std::string where;
  for (const auto& p : parts) where += (where.empty() ? "" : ", ") + p.agent_id;
  w.logs.push_back(deps_.logs->Row(alloc.trial_id, alloc.task_id,
                                   "Trial " + std::to_string(alloc.trial_id) + " (Experiment " +
                                       std::to_string(alloc.experiment_id) +
                                       ") was assigned to agent" + (parts.size() > 1 ? "s " : " ") +
                                       where));
  DET_RETURN_IF_ERROR(deps_.store->ApplyDecision(w).status());
  alloc.stored = true;
  alloc.resources = std::move(assigned_view.resources);
  SetState(alloc, AllocationRuntime::State::kAssigned);
  Notify(alloc.id);
  deps_.logs->Notify(alloc.trial_id);
  for (size_t rank = 0; rank < parts.size(); ++rank) {
    StartCommand start;
    start.allocation_id = alloc.id;
    start.task_id = alloc.task_id;
    start.slot_ids = parts[rank].slot_ids;
    start.entrypoint = launch.entrypoint;
    start.env = env;
    start.env["DET_RESOURCES_ID"] = ResourcesId(alloc, rank);
    start.env["DET_CONTAINER_RANK"] = std::to_string(rank);
    start.container = launch.container;
    deps_.agents->Push(parts[rank].agent_id, start);
  }
  return Status::Ok();
}

}  // namespace det::master::server
