// Master: agents (registration, the command long poll, events), placement and the ticker.
#include <spdlog/spdlog.h>

#include "master/scheduler/fitting.h"
#include "master/server/master.h"
#include "master/server/master_runtime.h"
#include "master/server/passwords.h"

namespace det::master::server {

using core::RunState;
using nlohmann::json;

namespace {

constexpr int64_t kSessionLifetimeMicros = 7ll * 24 * 3600 * 1000000;

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

}  // namespace

Result<json> Master::RegisterAgent(const std::string& agent_id, const json& body) {
  if (agent_id.empty()) return InvalidArgument("agent id: required");
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = agents_[agent_id];
  if (!slot) {
    slot = std::make_unique<AgentRuntime>();
    slot->id = agent_id;
    slot->registered_time = Now();
  }
  AgentRuntime& agent = *slot;
  agent.resource_pool = body.value("resourcePool", std::string("default"));
  if (agent.resource_pool.empty()) agent.resource_pool = "default";
  agent.hostname = body.value("hostname", std::string());
  agent.slots = body.value("slots", json::array());
  agent.connected = true;
  agent.last_seen = Now();
  std::set<std::string> running;
  for (const auto& r : body.value("running", json::array())) {
    if (r.is_string()) running.insert(r.get<std::string>());
  }
  // Re-adopt processes we know and that still run; anything else the agent runs is killed.
  for (const std::string& id : running) {
    auto it = allocations_.find(id);
    if (it == allocations_.end() || it->second->state == AllocationRuntime::State::kTerminated) {
      PushCommandLocked(agent, {{"type", "kill"}, {"allocationId", id}});
      continue;
    }
    AllocationRuntime& a = *it->second;
    a.agent_id = agent_id;
    a.state = AllocationRuntime::State::kRunning;
    a.adopt_deadline = 0;
    agent.allocations.insert(id);
    spdlog::info("agent {} re-adopted allocation {}", agent_id, id);
  }
  // Allocations placed here whose start was delivered but that no longer run were lost.
  std::vector<std::string> lost;
  for (auto& [id, a] : allocations_) {
    if (a->agent_id != agent_id || a->state == AllocationRuntime::State::kTerminated) continue;
    if (running.count(id)) continue;
    bool start_pending = false;
    for (const auto& c : agent.commands) {
      if (c.value("allocationId", "") == id && c.value("type", "") == "start") start_pending = true;
    }
    if (!start_pending) lost.push_back(id);
  }
  for (const auto& id : lost) {
    DET_RETURN_IF_ERROR(HandleAllocationExitLocked(*allocations_[id], -1,
                                                   "agent " + agent_id + " lost the process", true));
  }
  // Rebuild slot usage from live allocations.
  agent.used.clear();
  for (const auto& id : agent.allocations) {
    auto it = allocations_.find(id);
    if (it == allocations_.end()) continue;
    for (int s : it->second->slot_ids) agent.used[s] = id;
  }
  int64_t acked = agent.commands.empty() ? agent.next_seq - 1
                                         : agent.commands.front()["seq"].get<int64_t>() - 1;
  spdlog::info("agent {} registered ({} slots, pool {})", agent_id, agent.slots.size(),
               agent.resource_pool);
  ScheduleLocked();
  cv_.notify_all();
  return json{{"masterId", master_id_}, {"clusterId", cluster_id_}, {"commandSeq", acked}};
}

Result<json> Master::PollCommands(const std::string& agent_id, int64_t after, int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    auto it = agents_.find(agent_id);
    if (it == agents_.end()) {
      return FailedPrecondition("agent " + agent_id + " is not registered");
    }
    AgentRuntime& agent = *it->second;
    agent.last_seen = Now();
    if (!agent.connected) {
      return FailedPrecondition("agent " + agent_id + " must register again");
    }
    while (!agent.commands.empty() && agent.commands.front()["seq"].get<int64_t>() <= after) {
      agent.commands.pop_front();
    }
    if (!agent.commands.empty() || stopping_) {
      json out = json::array();
      for (const auto& c : agent.commands) out.push_back(c);
      return json{{"commands", out}};
    }
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout) {
      auto again = agents_.find(agent_id);
      if (again != agents_.end()) again->second->last_seen = Now();
      return json{{"commands", json::array()}};
    }
  }
}

Status Master::HandleAgentEvents(const std::string& agent_id, const json& body) {
  std::lock_guard<std::mutex> lock(mu_);
  auto agent_it = agents_.find(agent_id);
  if (agent_it == agents_.end()) return FailedPrecondition("agent " + agent_id + " is not registered");
  agent_it->second->last_seen = Now();
  for (const auto& ev : body.value("events", json::array())) {
    std::string type = ev.value("type", "");
    std::string id = ev.value("allocationId", "");
    auto it = allocations_.find(id);
    if (it == allocations_.end()) continue;  // duplicate or stale: already handled
    AllocationRuntime& a = *it->second;
    if (type == "started") {
      if (a.state == AllocationRuntime::State::kAssigned) {
        a.state = AllocationRuntime::State::kRunning;
        DET_ASSIGN_OR_RETURN(store::AllocationRow row, store_->GetAllocation(id));
        row.state = "RUNNING";
        DET_RETURN_IF_ERROR(store_->UpsertAllocation(row));
        TrialRuntime& t = *trials_[a.trial_id];
        AppendMasterLogLocked(t.id, t.task_id,
                              "Resources for Trial " + std::to_string(t.id) + " (Experiment " +
                                  std::to_string(t.experiment_id) + ") have started");
      }
    } else if (type == "exited") {
      DET_RETURN_IF_ERROR(HandleAllocationExitLocked(a, ev.value("exitCode", -1),
                                                     ev.value("error", std::string()), false));
    }
  }
  ScheduleLocked();
  cv_.notify_all();
  return Status::Ok();
}

std::vector<AgentView> Master::ListAgents() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<AgentView> out;
  for (const auto& [id, a] : agents_) {
    AgentView v;
    v.id = id;
    v.resource_pool = a->resource_pool;
    v.hostname = a->hostname;
    v.slots = a->slots;
    v.slot_allocations = a->used;
    v.registered_time = a->registered_time;
    v.last_seen = a->last_seen;
    v.connected = a->connected;
    out.push_back(std::move(v));
  }
  return out;
}

void Master::PushCommandLocked(AgentRuntime& agent, json command) {
  command["seq"] = agent.next_seq++;
  agent.commands.push_back(std::move(command));
  cv_.notify_all();
}

void Master::ScheduleLocked() {
  if (pending_.empty()) return;
  std::vector<scheduler::AgentCapacity> capacity;
  for (const auto& [id, a] : agents_) {
    if (!a->connected) continue;
    scheduler::AgentCapacity c;
    c.agent_id = id;
    for (const auto& s : a->slots) {
      int sid = s.value("id", 0);
      if (!a->used.count(sid)) c.free_slot_ids.push_back(sid);
    }
    c.total_slots = static_cast<int64_t>(a->slots.size());
    capacity.push_back(std::move(c));
  }
  std::vector<scheduler::SlotRequest> requests;
  for (const auto& id : pending_) {
    auto it = allocations_.find(id);
    if (it == allocations_.end()) continue;
    requests.push_back({id, it->second->slots});
  }
  std::vector<scheduler::Placement> placements = scheduler::PlaceFifo(requests, capacity);
  for (auto& p : placements) {
    AllocationRuntime& alloc = *allocations_[p.request_id];
    pending_.erase(std::remove(pending_.begin(), pending_.end(), p.request_id), pending_.end());
    Status st = StartAllocationOnAgentLocked(alloc, *agents_[p.agent_id], p.slot_ids);
    if (!st.ok()) spdlog::error("cannot start allocation {}: {}", alloc.id, st.ToString());
  }
}

Status Master::StartAllocationOnAgentLocked(AllocationRuntime& alloc, AgentRuntime& agent,
                                            std::vector<int> slot_ids) {
  TrialRuntime& trial = *trials_[alloc.trial_id];
  ExperimentRuntime& exp = *experiments_[trial.experiment_id];
  DET_ASSIGN_OR_RETURN(store::TrialRow trow, store_->GetTrial(trial.id));
  DET_ASSIGN_OR_RETURN(std::optional<store::CheckpointRow> latest, LatestCheckpointLocked(trial));
  std::string user_token = NewToken();
  DET_RETURN_IF_ERROR(store_->CreateSession(user_token, exp.owner_id, Now() + kSessionLifetimeMicros));

  json env = json::object();
  std::string device = "cpu";
  for (const auto& s : agent.slots) {
    if (s.value("type", "cpu") == "cuda") device = "cuda";
  }
  AddConfigEnv(exp.config.defaulted, device, &env);
  env["DET_TASK_ID"] = alloc.task_id;
  env["DET_ALLOCATION_ID"] = alloc.id;
  env["DET_RESOURCES_ID"] = alloc.id;
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
  if (latest) {
    env["DET_LATEST_CHECKPOINT"] = latest->uuid;
  } else if (!trow.warm_start_checkpoint_uuid.empty()) {
    // Warm start: the weights of another trial, while this trial's own count starts at zero.
    env["DET_LATEST_CHECKPOINT"] = trow.warm_start_checkpoint_uuid;
  }

  alloc.state = AllocationRuntime::State::kAssigned;
  alloc.agent_id = agent.id;
  alloc.slot_ids = slot_ids;
  DET_ASSIGN_OR_RETURN(store::AllocationRow row, store_->GetAllocation(alloc.id));
  row.state = "ASSIGNED";
  row.agent_id = agent.id;
  DET_RETURN_IF_ERROR(store_->UpsertAllocation(row));
  for (int s : slot_ids) agent.used[s] = alloc.id;
  agent.allocations.insert(alloc.id);
  PushCommandLocked(agent, {{"type", "start"},
                            {"allocationId", alloc.id},
                            {"taskId", alloc.task_id},
                            {"slotIds", slot_ids},
                            {"entrypoint", exp.config.entrypoint},
                            {"env", env}});
  AppendMasterLogLocked(trial.id, trial.task_id,
                        "Trial " + std::to_string(trial.id) + " (Experiment " +
                            std::to_string(exp.id) + ") was assigned to agent " + agent.id);
  return Status::Ok();
}

void Master::TickLocked() {
  int64_t now = Now();
  int64_t timeout = config_.agent_timeout_seconds * 1000000;
  for (auto& [id, agent] : agents_) {
    if (!agent->connected || now - agent->last_seen <= timeout) continue;
    agent->connected = false;
    spdlog::warn("agent {} lost (no contact for {} s)", id, config_.agent_timeout_seconds);
    std::vector<std::string> ids(agent->allocations.begin(), agent->allocations.end());
    for (const auto& aid : ids) {
      auto it = allocations_.find(aid);
      if (it == allocations_.end()) continue;
      Status st = HandleAllocationExitLocked(*it->second, -1, "agent " + id + " was lost", true);
      if (!st.ok()) spdlog::error("{}", st.ToString());
    }
    agent->allocations.clear();
    agent->used.clear();
    agent->commands.clear();
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
