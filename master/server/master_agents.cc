// Master: reconciling allocations with agents (registration, events, loss) and the tick. The
// agents themselves and their command channels live in AgentService (agent_service.h).
#include <spdlog/spdlog.h>

#include <chrono>

#include "master/server/agent_admin_service.h"
#include "master/server/master.h"
#include "master/server/master_runtime.h"
#include "master/server/slurm_service.h"
#include "master/server/task_service.h"
#include "master/slurm/slurm_job.h"

namespace det::master::server {

using core::RunState;
using nlohmann::json;

Result<json> Master::RegisterAgent(const std::string& agent_id, const json& body) {
  // Answers once the searcher state this call changed is stored (after mu_ is released).
  SearcherJournalService::AwaitScope stored(searcher_journal_.get());
  // mu_ first, then the agent service's: the re-adoption below must see the registration and
  // the allocations together.
  MutexLock lock(&mu_);
  DET_ASSIGN_OR_RETURN(
      AgentService::Registration reg,
      agents_->Register(agent_id, body, [this](const std::string& id, const std::string& pool) {
        if (config_.pools.Find(pool) != nullptr) return Status::Ok();
        return InvalidArgument("resourcePool: agent " + id + " asks for resource pool '" + pool +
                               "', which the master's resource_pools do not configure");
      }));
  auto resource_here = [&](AllocationRuntime& a) -> AllocationRuntime::Resource* {
    for (auto& res : a.resources) {
      if (res.agent_id == agent_id) return &res;
    }
    return nullptr;
  };
  // Tasks (commands, notebooks, ...) re-adopt their own allocations.
  std::set<std::string> task_allocations =
      tasks_->ReconcileAgent(agent_id, reg.running, reg.starting);
  // Re-adopt processes we know and that still run; anything else the agent runs is killed.
  for (const std::string& id : reg.running) {
    if (task_allocations.count(id)) continue;
    auto it = allocations_.find(id);
    AllocationRuntime* a = it == allocations_.end() ? nullptr : it->second.get();
    AllocationRuntime::Resource* res = a ? resource_here(*a) : nullptr;
    if (a == nullptr || a->state == AllocationRuntime::State::kTerminated || res == nullptr ||
        res->exited) {
      agents_->Push(agent_id, {{"type", "kill"}, {"allocationId", id}});
      continue;
    }
    res->started = true;
    NotifyAllocationLocked(id);
    if (a->state == AllocationRuntime::State::kAssigned) {
      a->state = AllocationRuntime::State::kRunning;
    }
    a->adopt_deadline = 0;
    spdlog::info("agent {} re-adopted allocation {}", agent_id, id);
  }
  // Allocations placed here whose start was delivered but that no longer run were lost.
  std::vector<std::string> lost;
  for (auto& [id, a] : allocations_) {
    if (a->state == AllocationRuntime::State::kTerminated || reg.running.count(id)) continue;
    AllocationRuntime::Resource* res = resource_here(*a);
    if (res == nullptr || res->exited) continue;
    if (!reg.starting.count(id)) lost.push_back(id);
  }
  for (const auto& id : lost) {
    AllocationRuntime& a = *allocations_[id];
    KillResourcesLocked(a);
    DET_RETURN_IF_ERROR(
        HandleAllocationExitLocked(a, -1, "agent " + agent_id + " lost the process", true));
  }
  if (slurm_) SlurmAgentRegisteredLocked(agent_id);
  // An agent's request runs the pass it asked for before answering, as the scheduling loop
  // would next: what this pass places on the agent is in its next command poll.
  SchedulePassNowLocked();
  return json{
      {"masterId", master_id_}, {"clusterId", cluster_id_}, {"commandSeq", reg.command_seq}};
}

void Master::PollCommands(const std::string& agent_id, int64_t after, int64_t timeout_ms,
                          Reply<json> reply) {
  // Only the agent service's lock: an agent's poll never waits on the Master.
  agents_->PollCommands(agent_id, after, timeout_ms, std::move(reply));
}

Status Master::HandleAgentEvents(const std::string& agent_id, const json& body) {
  // Answers once the searcher state this call changed is stored (after mu_ is released).
  SearcherJournalService::AwaitScope stored(searcher_journal_.get());
  auto arrived = std::chrono::steady_clock::now();
  MutexLock lock(&mu_);
  auto locked = std::chrono::steady_clock::now();
  DET_RETURN_IF_ERROR(agents_->Touch(agent_id));
  if (!body.is_object() || (body.contains("events") && !body["events"].is_array())) {
    return InvalidArgument("events: must be an object {\"events\": [...]}");
  }
  // An agent reports only on allocations placed on it; one bad event refuses the whole batch
  // before anything is applied.
  for (const auto& ev : body.value("events", json::array())) {
    if (!ev.is_object() || (ev.contains("allocationId") && !ev["allocationId"].is_string()) ||
        (ev.contains("type") && !ev["type"].is_string()) ||
        (ev.contains("exitCode") && !ev["exitCode"].is_number_integer()) ||
        (ev.contains("error") && !ev["error"].is_string())) {
      return InvalidArgument(
          "events: each event must be an object with string type and allocationId and an "
          "integer exitCode (got " + ev.dump().substr(0, 200) + ")");
    }
    auto it = allocations_.find(ev.value("allocationId", ""));
    if (it == allocations_.end()) continue;
    bool placed_here = false;
    for (const auto& res : it->second->resources) placed_here |= res.agent_id == agent_id;
    if (!placed_here) {
      return PermissionDenied("agent '" + agent_id + "' posted an event for allocation '" +
                              it->first + "', which is not placed on it");
    }
  }
  for (const auto& ev : body.value("events", json::array())) {
    std::string type = ev.value("type", "");
    std::string id = ev.value("allocationId", "");
    auto it = allocations_.find(id);
    if (it == allocations_.end()) {
      tasks_->HandleAgentEvent(agent_id, ev);  // a task's, or stale
      continue;
    }
    AllocationRuntime& a = *it->second;
    if (type == "started") {
      for (auto& res : a.resources) {
        if (res.agent_id == agent_id) res.started = true;
      }
      NotifyAllocationLocked(id);
      if (a.state == AllocationRuntime::State::kAssigned) {
        AllocationRuntime running = a;
        running.state = AllocationRuntime::State::kRunning;
        DET_RETURN_IF_ERROR(store_->UpsertAllocation(AllocationRowOf(running)));
        a.state = running.state;
        TrialRuntime& t = *trials_[a.trial_id];
        AppendMasterLogLocked(t.id, t.task_id,
                              "Resources for Trial " + std::to_string(t.id) + " (Experiment " +
                                  std::to_string(t.experiment_id) + ") have started");
      }
    } else if (type == "exited") {
      if (slurm_ && DeferSlurmExitLocked(a, agent_id, ev.value("exitCode", -1),
                                         ev.value("error", std::string()))) {
        continue;  // Slurm first says whether it cancelled the job
      }
      DET_RETURN_IF_ERROR(HandleResourceExitLocked(a, agent_id, ev.value("exitCode", -1),
                                                   ev.value("error", std::string())));
    }
  }
  // An agent's request runs the pass it asked for before answering, as the scheduling loop
  // would next: what this pass places on the agent is in its next command poll.
  auto handled = std::chrono::steady_clock::now();
  SchedulePassNowLocked();
  // The timeline of a trial start (docs/operations.md, "Trial start cost").
  auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  std::string types;
  for (const auto& ev : body.value("events", json::array())) {
    types += (types.empty() ? "" : ",") + ev.value("type", std::string("?"));
  }
  spdlog::debug(
      "agent {}: event(s) {}: waited {:.1f} ms for the lock, applied in {:.1f} ms, "
      "scheduling pass {:.1f} ms",
      agent_id, types, ms(locked - arrived), ms(handled - locked),
      ms(std::chrono::steady_clock::now() - handled));
  return Status::Ok();
}

std::vector<AgentView> Master::ListAgents() {
  std::vector<AgentService::Agent> agents = agents_->List();
  MutexLock lock(&mu_);
  std::vector<AgentView> out;
  for (AgentService::Agent& a : agents) {
    // The agent of an ended Slurm job is gone for good, not a lost agent of the cluster.
    if (slurm_ && !a.connected && slurm::ParseAgentId(a.id)) continue;
    AgentView v;
    v.id = a.id;
    for (const AllocationRuntime* alloc : AllocationsOnAgentLocked(a.id)) {
      for (size_t rank = 0; rank < alloc->resources.size(); ++rank) {
        const auto& res = alloc->resources[rank];
        if (res.agent_id != a.id || res.exited) continue;
        for (int s : res.slot_ids) {
          v.slot_allocations[s] = alloc->id;
          v.slot_resources[s] = ResourcesId(*alloc, rank);
        }
      }
    }
    v.resource_pool = std::move(a.resource_pool);
    v.hostname = std::move(a.hostname);
    v.slots = std::move(a.slots);
    v.registered_time = a.registered_time;
    v.last_seen = a.last_seen;
    v.connected = a.connected;
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<Master::AllocationRuntime*> Master::AllocationsOnAgentLocked(
    const std::string& agent_id) const {
  std::vector<AllocationRuntime*> out;
  for (const auto& [id, a] : allocations_) {
    if (a->state == AllocationRuntime::State::kTerminated) continue;
    for (const auto& res : a->resources) {
      if (res.agent_id == agent_id && !res.exited) {
        out.push_back(a.get());
        break;
      }
    }
  }
  return out;
}

void Master::TickLocked() {
  int64_t now = Now();
  for (const std::string& id : agents_->ExpireLost()) {
    tasks_->AgentLost(id);
    for (AllocationRuntime* alloc : AllocationsOnAgentLocked(id)) {
      KillResourcesLocked(*alloc);  // its other nodes, if any
      // A Slurm job whose agent is lost will not end by itself: cancel it now, not after the
      // grace an orderly end gets (its other nodes' agents would idle until then).
      if (slurm_) slurm_->Forget(alloc->id, /*grace_ms=*/0);
      Status st = HandleAllocationExitLocked(*alloc, -1, "agent " + id + " was lost", true);
      if (!st.ok()) spdlog::error("{}", st.ToString());
    }
  }
  // An agent disabled without drain keeps nothing running (Determined kills it); the work is
  // released as the scheduler's preemption is, so its trial is queued again, not failed.
  for (const std::string& id : agent_admin_->KillingAgents()) {
    for (AllocationRuntime* alloc : AllocationsOnAgentLocked(id)) {
      if (alloc->kill_requested) continue;
      alloc->released = true;
      const TrialRuntime& t = *trials_.at(alloc->trial_id);
      AppendMasterLogLocked(
          t.id, t.task_id,
          "Trial " + std::to_string(t.id) + " was killed: agent " + id + " was disabled");
      TerminateAllocationLocked(*alloc, false);
    }
  }
  // A disabled slot has no drain: the work using it is killed the same way.
  for (const auto& [agent_id, slot_id] : agent_admin_->DisabledSlots()) {
    for (AllocationRuntime* alloc : AllocationsOnAgentLocked(agent_id)) {
      if (alloc->kill_requested) continue;
      bool uses_slot = false;
      for (const auto& res : alloc->resources) {
        if (res.agent_id != agent_id || res.exited) continue;
        for (int s : res.slot_ids) uses_slot = uses_slot || s == slot_id;
      }
      if (!uses_slot) continue;
      alloc->released = true;
      const TrialRuntime& t = *trials_.at(alloc->trial_id);
      AppendMasterLogLocked(t.id, t.task_id,
                            "Trial " + std::to_string(t.id) + " was killed: slot " +
                                std::to_string(slot_id) + " of agent " + agent_id +
                                " was disabled");
      TerminateAllocationLocked(*alloc, false);
    }
  }
  std::vector<AllocationRuntime*> to_kill, to_fail;
  for (auto& [id, a] : allocations_) {
    if (a->state == AllocationRuntime::State::kTerminated) continue;
    if (a->preempt && !a->kill_requested && now > a->kill_deadline) to_kill.push_back(a.get());
    if (a->adopt_deadline > 0 && now > a->adopt_deadline &&
        a->state == AllocationRuntime::State::kAssigned) {
      to_fail.push_back(a.get());
    }
  }
  for (auto* a : to_kill) TerminateAllocationLocked(*a, false);
  tasks_->Tick();
  for (auto* a : to_fail) {
    Status st = HandleAllocationExitLocked(*a, -1, "not re-adopted after master restart", true);
    if (!st.ok()) spdlog::error("{}", st.ToString());
  }
  if (provisioner_) ProvisionerTickLocked();
  ScheduleLocked();
}

}  // namespace det::master::server
