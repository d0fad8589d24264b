// AllocationService: reconciling allocations with agents (registration, events, loss) and the
// tick. The agents themselves and their command channels live in AgentService.
#include <spdlog/spdlog.h>

#include <chrono>
#include <future>

#include "master/server/agent_admin_service.h"
#include "master/server/allocation_service.h"
#include "master/server/provisioner_service.h"
#include "master/server/slurm_service.h"
#include "master/server/task_service.h"
#include "master/slurm/slurm_job.h"

namespace det::master::server {

using nlohmann::json;

void AllocationService::RegisterAgent(const std::string& agent_id, json body,
                                      Done<Result<json>> done) {
  deps_.loop->Decide<json>([this, agent_id, body = std::move(body)]()
                               ON_RUNTIME { return RegisterAgentNow(agent_id, body); },
                           std::move(done));
}

Result<json> AllocationService::RegisterAgent(const std::string& agent_id, const json& body) {
  return deps_.loop->DecideAndWait<json>(
      [&]() ON_RUNTIME { return RegisterAgentNow(agent_id, body); });
}

Result<json> AllocationService::RegisterAgentNow(const std::string& agent_id, const json& body) {
  if (!body.is_object()) {
    return InvalidArgument("body: must be an object with the agent's slots (got " +
                           body.dump().substr(0, 200) + ")");
  }
  // On the loop: the re-adoption below sees the registration and the allocations together.
  DET_ASSIGN_OR_RETURN(
      AgentService::Registration reg,
      deps_.agents->Register(
          agent_id, body, [this](const std::string& id, const std::string& pool) {
            if (deps_.config->pools.Find(pool) != nullptr) return Status::Ok();
            return InvalidArgument("resourcePool: agent " + id + " asks for resource pool '" +
                                   pool + "', which the master's resource_pools do not configure");
          }));
  auto resource_here = [&](AllocationRuntime& a) -> AllocationRuntime::Resource* {
    for (auto& res : a.resources) {
      if (res.agent_id == agent_id) return &res;
    }
    return nullptr;
  };
  // Tasks (commands, notebooks, ...) re-adopt their own allocations.
  std::set<std::string> task_allocations =
      deps_.tasks->ReconcileAgent(agent_id, reg.running, reg.starting);
  // Re-adopt processes we know and that still run; anything else the agent runs is killed.
  for (const std::string& id : reg.running) {
    if (task_allocations.count(id)) continue;
    AllocationRuntime* a = Find(id);
    AllocationRuntime::Resource* res = a ? resource_here(*a) : nullptr;
    if (a == nullptr || a->state == AllocationRuntime::State::kTerminated || res == nullptr ||
        res->exited) {
      deps_.agents->Push(agent_id, KillCommand{id});
      continue;
    }
    res->started = true;
    Notify(id);
    if (a->state == AllocationRuntime::State::kAssigned) {
      SetState(*a, AllocationRuntime::State::kRunning);
    }
    a->adopt_deadline = 0;
    spdlog::info("agent {} re-adopted allocation {}", agent_id, id);
    // Killed while its agent was away (no command queue to take the kill then): killed now.
    if (a->kill_requested) deps_.agents->Push(agent_id, KillCommand{id});
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
    KillResources(a);
    DET_RETURN_IF_ERROR(HandleExit(a, -1, "agent " + agent_id + " lost the process", true));
  }
  if (slurm_) SlurmAgentRegistered(agent_id);
  // An agent's request runs the pass it asked for before answering, as the scheduling loop
  // would next: what this pass places on the agent is in its next command poll.
  SchedulePassNow();
  return json{
      {"masterId", master_id_}, {"clusterId", cluster_id_}, {"commandSeq", reg.command_seq}};
}

void AllocationService::PollCommands(const std::string& agent_id, int64_t after, int64_t timeout_ms,
                                     Reply<json> reply) {
  // Only the agent service's lock: an agent's poll never waits on the loop.
  deps_.agents->PollCommands(agent_id, after, timeout_ms, std::move(reply));
}

void AllocationService::HandleAgentEvents(const std::string& agent_id, json body,
                                          Done<Status> done) {
  // Checked and the agent marked alive before queueing: a busy loop does not make it look lost.
  if (Status st = deps_.agents->Touch(agent_id); !st.ok()) return done(st);
  auto arrived = std::chrono::steady_clock::now();
  deps_.loop->Decide(
      [this, agent_id, body = std::move(body), arrived]() ON_RUNTIME {
        auto started = std::chrono::steady_clock::now();
        Status st = HandleAgentEventsNow(agent_id, body);
        // The timeline of a trial start (docs/operations.md, "Trial start cost").
        auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
        spdlog::debug("agent {}: events waited {:.1f} ms for the loop, handled in {:.1f} ms",
                      agent_id, ms(started - arrived),
                      ms(std::chrono::steady_clock::now() - started));
        return st;
      },
      std::move(done));
}

Status AllocationService::HandleAgentEvents(const std::string& agent_id, const json& body) {
  std::promise<Status> p;
  HandleAgentEvents(agent_id, body, [&p](Status st) { p.set_value(std::move(st)); });
  return p.get_future().get();
}

Status AllocationService::HandleAgentEventsNow(const std::string& agent_id, const json& body) {
  DET_ASSIGN_OR_RETURN(std::vector<AgentEvent> events, ParseAgentEvents(body));
  // An agent reports only on allocations placed on it; one bad event refuses the whole batch
  // before anything is applied.
  for (const AgentEvent& ev : events) {
    AllocationRuntime* a = Find(ev.allocation_id);
    if (a == nullptr) continue;
    bool placed_here = false;
    for (const auto& res : a->resources) placed_here |= res.agent_id == agent_id;
    if (!placed_here) {
      return PermissionDenied("agent '" + agent_id + "' posted an event for allocation '" + a->id +
                              "', which is not placed on it");
    }
  }
  for (const AgentEvent& ev : events) {
    AllocationRuntime* found = Find(ev.allocation_id);
    if (found == nullptr) {
      deps_.tasks->HandleAgentEvent(agent_id, ev.raw);  // a task's, or stale
      continue;
    }
    AllocationRuntime& a = *found;
    if (ev.type == AgentEvent::Type::kStarted) {
      for (auto& res : a.resources) {
        if (res.agent_id == agent_id) res.started = true;
      }
      Notify(a.id);
      if (a.state == AllocationRuntime::State::kAssigned) {
        AllocationRuntime running = a;
        running.state = AllocationRuntime::State::kRunning;
        store::DecisionWrites w;
        w.allocations.push_back(RowOf(running));
        w.logs.push_back(deps_.logs->Row(a.trial_id, a.task_id,
                                         "Resources for Trial " + std::to_string(a.trial_id) +
                                             " (Experiment " + std::to_string(a.experiment_id) +
                                             ") have started"));
        // Determined's harness says this as each run starts; users and its tests count runs
        // by it.
        w.logs.push_back(deps_.logs->Row(a.trial_id, a.task_id,
                                         "New trial runner in (container " + a.id +
                                             ") on agent " + agent_id));
        DET_RETURN_IF_ERROR(deps_.store->ApplyDecision(w).status());
        SetState(a, AllocationRuntime::State::kRunning);
        deps_.logs->Notify(a.trial_id);
      }
    } else if (ev.type == AgentEvent::Type::kExited) {
      if (slurm_ && DeferSlurmExit(a, agent_id, ev.exit_code, ev.error)) {
        continue;  // Slurm first says whether it cancelled the job
      }
      DET_RETURN_IF_ERROR(HandleResourceExit(a, agent_id, ev.exit_code, ev.error));
    }
  }
  // An agent's request runs the pass it asked for before answering, as the scheduling loop
  // would next: what this pass places on the agent is in its next command poll.
  SchedulePassNow();
  return Status::Ok();
}

std::vector<AgentView> AllocationService::ListAgents() {
  // Read without the loop: the agents from their service, the slots in use from the view the
  // loop publishes, so a large decision on the loop never holds this listing up.
  std::vector<AgentService::Agent> agents = deps_.agents->List();
  std::vector<AgentView> out;
  out.reserve(agents.size());
  for (AgentService::Agent& a : agents) {
    // The agent of an ended Slurm job is gone for good, not a lost agent of the cluster.
    if (slurm_ != nullptr && !a.connected && slurm::ParseAgentId(a.id)) continue;
    AgentView v;
    v.id = a.id;
    for (auto& [slot, use] : deps_.view->SlotsOn(a.id)) {
      v.slot_allocations[slot] = std::move(use.allocation_id);
      v.slot_resources[slot] = std::move(use.resources_id);
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

void AllocationService::Tick() {
  int64_t now = Now();
  Reap();
  for (const std::string& id : deps_.agents->ExpireLost()) {
    deps_.tasks->AgentLost(id);
    for (AllocationRuntime* alloc : OnAgent(id)) {
      KillResources(*alloc);  // its other nodes, if any
      // A Slurm job whose agent is lost will not end by itself: cancel it now, not after the
      // grace an orderly end gets (its other nodes' agents would idle until then).
      if (slurm_) slurm_->Forget(alloc->id, /*grace_ms=*/0);
      Status st = HandleExit(*alloc, -1, "agent " + id + " was lost", true);
      if (!st.ok()) spdlog::error("{}", st.ToString());
    }
  }
  // An agent disabled without drain keeps nothing running (Determined kills it); the work is
  // released as the scheduler's preemption is, so its trial is queued again, not failed.
  for (const std::string& id : deps_.agent_admin->KillingAgents()) {
    for (AllocationRuntime* alloc : OnAgent(id)) {
      if (alloc->kill_requested) continue;
      alloc->released = true;
      Log(*alloc, "Trial " + std::to_string(alloc->trial_id) + " was killed: agent " + id +
                      " was disabled");
      Terminate(alloc->id, false);
    }
  }
  // A disabled slot has no drain: the work using it is killed the same way.
  for (const auto& [agent_id, slot_id] : deps_.agent_admin->DisabledSlots()) {
    for (AllocationRuntime* alloc : OnAgent(agent_id)) {
      if (alloc->kill_requested) continue;
      bool uses_slot = false;
      for (const auto& res : alloc->resources) {
        if (res.agent_id != agent_id || res.exited) continue;
        for (int s : res.slot_ids) uses_slot = uses_slot || s == slot_id;
      }
      if (!uses_slot) continue;
      alloc->released = true;
      Log(*alloc, "Trial " + std::to_string(alloc->trial_id) + " was killed: slot " +
                      std::to_string(slot_id) + " of agent " + agent_id + " was disabled");
      Terminate(alloc->id, false);
    }
  }
  std::vector<std::string> to_kill, to_fail;
  for (auto& [id, a] : allocations_) {
    if (a->state == AllocationRuntime::State::kTerminated) continue;
    if (a->preempt && !a->kill_requested && now > a->kill_deadline) to_kill.push_back(id);
    if (a->adopt_deadline > 0 && now > a->adopt_deadline &&
        a->state == AllocationRuntime::State::kAssigned) {
      to_fail.push_back(id);
    }
  }
  for (const auto& id : to_kill) Terminate(id, false);
  deps_.tasks->Tick();
  for (const auto& id : to_fail) {
    AllocationRuntime* a = Find(id);
    if (a == nullptr) continue;
    Status st = HandleExit(*a, -1, "not re-adopted after master restart", true);
    if (!st.ok()) spdlog::error("{}", st.ToString());
  }
  if (deps_.provisioner) ProvisionerTick();
  RequestPass();
}

}  // namespace det::master::server
