#include "master/server/agent_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

namespace det::master::server {

using nlohmann::json;

namespace {
std::string PollKey(const std::string& agent_id) { return "agent:" + agent_id; }
}  // namespace

AgentService::AgentService(const Clock* clock, Waiters* waiters, int64_t agent_timeout_seconds)
    : clock_(clock), waiters_(waiters), agent_timeout_seconds_(agent_timeout_seconds) {}

Result<AgentService::Registration> AgentService::Register(const std::string& agent_id,
                                                          const json& body,
                                                          const PoolCheck& check_pool) {
  if (agent_id.empty()) return InvalidArgument("agent id: required");
  // Every field's type before anything is recorded: a wrong one is refused naming it, and the
  // reads below cannot throw half way through.
  for (const char* key : {"resourcePool", "hostname", "address"}) {
    if (body.contains(key) && !body[key].is_string()) {
      return InvalidArgument(std::string(key) + ": must be a string (got " +
                             body[key].dump().substr(0, 200) + ")");
    }
  }
  for (const char* key : {"slots", "containerRuntimes", "running"}) {
    if (body.contains(key) && !body[key].is_array()) {
      return InvalidArgument(std::string(key) + ": must be a list (got " +
                             body[key].dump().substr(0, 200) + ")");
    }
  }
  std::string pool = body.value("resourcePool", std::string("default"));
  if (pool.empty()) pool = "default";
  DET_RETURN_IF_ERROR(check_pool(agent_id, pool));
  MutexLock lock(&mu_);
  auto [it, inserted] = agents_.try_emplace(agent_id);
  Record& r = it->second;
  if (inserted || r.forgotten) {
    r.agent.id = agent_id;
    r.agent.registered_time = Now();
    r.forgotten = false;
  }
  r.agent.resource_pool = pool;
  r.agent.hostname = body.value("hostname", std::string());
  r.agent.address = body.value("address", std::string("127.0.0.1"));
  r.agent.slots = body.value("slots", json::array());
  r.agent.container_runtimes.clear();
  for (const auto& rt : body.value("containerRuntimes", json::array())) {
    if (rt.is_string()) r.agent.container_runtimes.push_back(rt.get<std::string>());
  }
  r.agent.connected = true;
  r.agent.last_seen = Now();
  Registration out;
  for (const auto& run : body.value("running", json::array())) {
    if (run.is_string()) out.running.insert(run.get<std::string>());
  }
  for (const auto& c : r.commands) {
    if (c.value("type", "") == "start") out.starting.insert(c.value("allocationId", ""));
  }
  out.command_seq =
      r.commands.empty() ? r.next_seq - 1 : r.commands.front()["seq"].get<int64_t>() - 1;
  spdlog::info("agent {} registered ({} slots, pool {})", agent_id, r.agent.slots.size(), pool);
  NotifyLocked(agent_id);  // a poll from before the re-registration re-checks
  return out;
}

void AgentService::PollCommands(const std::string& agent_id, int64_t after, int64_t timeout_ms,
                                Reply<json> reply) {
  timeout_ms = std::min(timeout_ms, agent_timeout_seconds_ * 500);
  MutexLock lock(&mu_);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto found = agents_.find(agent_id);
  if (found == agents_.end()) {
    reply(FailedPrecondition("agent " + agent_id + " is not registered"));
    return;
  }
  // An open poll is contact: an idle agent waiting in its long poll is alive however short
  // agent_timeout is. A dead agent's abandoned poll ends at its deadline.
  Record& record = found->second;  // map nodes are never erased
  record.agent.last_seen = Now();
  ++record.open_polls;
  auto step = std::make_shared<std::function<bool(bool)>>(
      [this, &record, agent_id, after, reply = std::move(reply)](bool final) REQUIRES(mu_) {
        auto answer = [&](Result<json> r) {
          --record.open_polls;
          record.agent.last_seen = Now();
          reply(std::move(r));
          return true;
        };
        if (!record.agent.connected) {
          return answer(FailedPrecondition("agent " + agent_id + " must register again"));
        }
        while (!record.commands.empty() && record.commands.front()["seq"].get<int64_t>() <= after) {
          record.commands.pop_front();
        }
        if (!record.commands.empty() || draining_) {
          json out = json::array();
          for (const auto& c : record.commands) out.push_back(c);
          return answer(json{{"commands", out}});
        }
        if (final) return answer(json{{"commands", json::array()}});
        return false;
      });
  LongPollLocked(agent_id, deadline, std::move(step), false);
}

void AgentService::LongPollLocked(const std::string& agent_id, Waiters::TimePoint deadline,
                                  PollStep step, bool final) {
  final = final || draining_ || std::chrono::steady_clock::now() >= deadline;
  if ((*step)(final)) return;
  waiters_->Add(PollKey(agent_id), deadline, [this, agent_id, deadline, step](bool timed_out) {
    MutexLock lock(&mu_);
    LongPollLocked(agent_id, deadline, step, timed_out);
  });
}

void AgentService::NotifyLocked(const std::string& agent_id) {
  waiters_->Notify(PollKey(agent_id));
}

bool AgentService::Push(const std::string& agent_id, const AgentCommand& typed) {
  json command = CommandJson(typed);
  MutexLock lock(&mu_);
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return false;
  Record& r = it->second;
  command["seq"] = r.next_seq++;
  r.commands.push_back(std::move(command));
  NotifyLocked(agent_id);
  return true;
}

Status AgentService::Touch(const std::string& agent_id) {
  MutexLock lock(&mu_);
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) {
    return Unavailable("agent " + agent_id + " is not registered yet: retry after registering");
  }
  it->second.agent.last_seen = Now();
  return Status::Ok();
}

std::vector<std::string> AgentService::ExpireLost() {
  MutexLock lock(&mu_);
  std::vector<std::string> lost;
  int64_t now = Now();
  int64_t timeout = agent_timeout_seconds_ * 1000000;
  for (auto& [id, r] : agents_) {
    if (!r.agent.connected || r.open_polls > 0 || now - r.agent.last_seen <= timeout) continue;
    r.agent.connected = false;
    r.commands.clear();
    spdlog::warn("agent {} lost (no contact for {} s)", id, agent_timeout_seconds_);
    NotifyLocked(id);
    lost.push_back(id);
  }
  return lost;
}

std::vector<AgentService::Agent> AgentService::List() const {
  MutexLock lock(&mu_);
  std::vector<Agent> out;
  out.reserve(agents_.size());
  for (const auto& [id, r] : agents_) {
    if (!r.forgotten) out.push_back(r.agent);
  }
  return out;
}

void AgentService::Forget(const std::string& agent_id) {
  MutexLock lock(&mu_);
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return;
  // The record stays (open polls point at it) but is no longer listed.
  it->second.forgotten = true;
  it->second.agent.connected = false;
  it->second.commands.clear();
  NotifyLocked(agent_id);
}

std::optional<AgentService::Agent> AgentService::Find(const std::string& agent_id) const {
  MutexLock lock(&mu_);
  auto it = agents_.find(agent_id);
  if (it == agents_.end() || it->second.forgotten) return std::nullopt;
  return it->second.agent;
}

void AgentService::BeginShutdown() {
  MutexLock lock(&mu_);
  draining_ = true;
}

}  // namespace det::master::server
