// Master: agents (registration, the command long poll, events), placement and the ticker.
#include <spdlog/spdlog.h>

#include "master/server/master.h"
#include "master/server/master_runtime.h"

namespace det::master::server {

using core::RunState;
using nlohmann::json;

Result<json> Master::RegisterAgent(const std::string& agent_id, const json& body) {
  if (agent_id.empty()) return InvalidArgument("agent id: required");
  MutexLock lock(&mu_);
  auto& slot = agents_[agent_id];
  if (!slot) {
    slot = std::make_unique<AgentRuntime>();
    slot->id = agent_id;
    slot->registered_time = Now();
  }
  AgentRuntime& agent = *slot;
  std::string pool = body.value("resourcePool", std::string("default"));
  if (pool.empty()) pool = "default";
  if (config_.pools.Find(pool) == nullptr) {
    return InvalidArgument("resourcePool: agent " + agent_id + " asks for resource pool '" + pool +
                           "', which the master's resource_pools do not configure");
  }
  agent.resource_pool = pool;
  agent.hostname = body.value("hostname", std::string());
  agent.address = body.value("address", std::string("127.0.0.1"));
  agent.slots = body.value("slots", json::array());
  agent.connected = true;
  agent.last_seen = Now();
  std::set<std::string> running;
  for (const auto& r : body.value("running", json::array())) {
    if (r.is_string()) running.insert(r.get<std::string>());
  }
  auto resource_here = [&](AllocationRuntime& a) -> AllocationRuntime::Resource* {
    for (auto& res : a.resources) {
      if (res.agent_id == agent_id) return &res;
    }
    return nullptr;
  };
  // Re-adopt processes we know and that still run; anything else the agent runs is killed.
  for (const std::string& id : running) {
    auto it = allocations_.find(id);
    AllocationRuntime* a = it == allocations_.end() ? nullptr : it->second.get();
    AllocationRuntime::Resource* res = a ? resource_here(*a) : nullptr;
    if (a == nullptr || a->state == AllocationRuntime::State::kTerminated || res == nullptr ||
        res->exited) {
      PushCommandLocked(agent, {{"type", "kill"}, {"allocationId", id}});
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
    if (a->state == AllocationRuntime::State::kTerminated || running.count(id)) continue;
    AllocationRuntime::Resource* res = resource_here(*a);
    if (res == nullptr || res->exited) continue;
    bool start_pending = false;
    for (const auto& c : agent.commands) {
      if (c.value("allocationId", "") == id && c.value("type", "") == "start") start_pending = true;
    }
    if (!start_pending) lost.push_back(id);
  }
  for (const auto& id : lost) {
    AllocationRuntime& a = *allocations_[id];
    KillResourcesLocked(a);
    DET_RETURN_IF_ERROR(
        HandleAllocationExitLocked(a, -1, "agent " + agent_id + " lost the process", true));
  }
  int64_t acked = agent.commands.empty() ? agent.next_seq - 1
                                         : agent.commands.front()["seq"].get<int64_t>() - 1;
  spdlog::info("agent {} registered ({} slots, pool {})", agent_id, agent.slots.size(),
               agent.resource_pool);
  ScheduleLocked();
  NotifyAgentLocked(agent_id);  // a poll from before the re-registration re-checks
  return json{{"masterId", master_id_}, {"clusterId", cluster_id_}, {"commandSeq", acked}};
}

void Master::PollCommands(const std::string& agent_id, int64_t after, int64_t timeout_ms,
                          Reply<json> reply) {
  // Polls end within half the agent timeout, so an abandoned poll of a dead agent cannot keep
  // it "in contact" for long: it is found lost within 1.5 x agent_timeout.
  timeout_ms = std::min(timeout_ms, config_.agent_timeout_seconds * 500);
  MutexLock lock(&mu_);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto found = agents_.find(agent_id);
  if (found == agents_.end()) {
    reply(FailedPrecondition("agent " + agent_id + " is not registered"));
    return;
  }
  // An open poll is contact: an idle agent waiting in its long poll is alive however short
  // agent_timeout is. A dead agent's abandoned poll ends at its deadline.
  AgentRuntime& agent = *found->second;
  agent.last_seen = Now();
  ++agent.open_polls;
  auto step = std::make_shared<std::function<bool(bool)>>(
      [this, &agent, agent_id, after, reply = std::move(reply)](bool final) REQUIRES(mu_) {
        auto answer = [&](Result<json> r) {
          --agent.open_polls;
          agent.last_seen = Now();
          reply(std::move(r));
          return true;
        };
        if (!agent.connected) {
          return answer(FailedPrecondition("agent " + agent_id + " must register again"));
        }
        while (!agent.commands.empty() && agent.commands.front()["seq"].get<int64_t>() <= after) {
          agent.commands.pop_front();
        }
        if (!agent.commands.empty() || stopping_ || draining_) {
          json out = json::array();
          for (const auto& c : agent.commands) out.push_back(c);
          return answer(json{{"commands", out}});
        }
        if (final) return answer(json{{"commands", json::array()}});
        return false;
      });
  LongPollLocked("agent:" + agent_id, deadline, std::move(step));
}

Status Master::HandleAgentEvents(const std::string& agent_id, const json& body) {
  MutexLock lock(&mu_);
  auto agent_it = agents_.find(agent_id);
  // Unavailable, not a 400: events from before a master restart must be retried after the
  // agent re-registers, never dropped (a dropped exit made the trial look lost and rerun).
  if (agent_it == agents_.end()) {
    return Unavailable("agent " + agent_id + " is not registered yet: retry after registering");
  }
  agent_it->second->last_seen = Now();
  for (const auto& ev : body.value("events", json::array())) {
    std::string type = ev.value("type", "");
    std::string id = ev.value("allocationId", "");
    auto it = allocations_.find(id);
    if (it == allocations_.end()) continue;  // duplicate or stale: already handled
    AllocationRuntime& a = *it->second;
    if (type == "started") {
      for (auto& res : a.resources) {
        if (res.agent_id == agent_id) res.started = true;
      }
      NotifyAllocationLocked(id);
      if (a.state == AllocationRuntime::State::kAssigned) {
        a.state = AllocationRuntime::State::kRunning;
        DET_ASSIGN_OR_RETURN(store::AllocationRow row, store_->GetAllocation(id));
        row.state = std::string(core::AllocationStateName(core::AllocationState::kRunning));
        DET_RETURN_IF_ERROR(store_->UpsertAllocation(row));
        TrialRuntime& t = *trials_[a.trial_id];
        AppendMasterLogLocked(t.id, t.task_id,
                              "Resources for Trial " + std::to_string(t.id) + " (Experiment " +
                                  std::to_string(t.experiment_id) + ") have started");
      }
    } else if (type == "exited") {
      DET_RETURN_IF_ERROR(HandleResourceExitLocked(a, agent_id, ev.value("exitCode", -1),
                                                   ev.value("error", std::string())));
    }
  }
  ScheduleLocked();
  return Status::Ok();
}

std::vector<AgentView> Master::ListAgents() {
  MutexLock lock(&mu_);
  std::vector<AgentView> out;
  for (const auto& [id, a] : agents_) {
    AgentView v;
    v.id = id;
    v.resource_pool = a->resource_pool;
    v.hostname = a->hostname;
    v.slots = a->slots;
    for (const AllocationRuntime* alloc : AllocationsOnAgentLocked(id)) {
      for (size_t rank = 0; rank < alloc->resources.size(); ++rank) {
        const auto& res = alloc->resources[rank];
        if (res.agent_id != id || res.exited) continue;
        for (int s : res.slot_ids) {
          v.slot_allocations[s] = alloc->id;
          v.slot_resources[s] = ResourcesId(*alloc, rank);
        }
      }
    }
    v.registered_time = a->registered_time;
    v.last_seen = a->last_seen;
    v.connected = a->connected;
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

void Master::PushCommandLocked(AgentRuntime& agent, json command) {
  command["seq"] = agent.next_seq++;
  agent.commands.push_back(std::move(command));
  NotifyAgentLocked(agent.id);
}

void Master::TickLocked() {
  int64_t now = Now();
  int64_t timeout = config_.agent_timeout_seconds * 1000000;
  for (auto& [id, agent] : agents_) {
    if (!agent->connected || agent->open_polls > 0 || now - agent->last_seen <= timeout) continue;
    agent->connected = false;
    spdlog::warn("agent {} lost (no contact for {} s)", id, config_.agent_timeout_seconds);
    for (AllocationRuntime* alloc : AllocationsOnAgentLocked(id)) {
      KillResourcesLocked(*alloc);  // its other nodes, if any
      Status st = HandleAllocationExitLocked(*alloc, -1, "agent " + id + " was lost", true);
      if (!st.ok()) spdlog::error("{}", st.ToString());
    }
    agent->commands.clear();
    NotifyAgentLocked(id);
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
  for (auto* a : to_fail) {
    Status st = HandleAllocationExitLocked(*a, -1, "not re-adopted after master restart", true);
    if (!st.ok()) spdlog::error("{}", st.ToString());
  }
  ScheduleLocked();
}

}  // namespace det::master::server
