#pragma once
// AgentService: the agents the master knows and their command channels. An agent registers
// (its resource pool, address and slots), long-polls for its commands (start, kill) and is lost
// when it is silent longer than agent_timeout. Commands carry a sequence number; the agent
// acknowledges them by polling past it, so a command survives a dropped answer.
//
// Own state under its own mutex. The allocations service pushes commands and reads agents from
// the runtime loop while deciding; this service never calls back, and its command polls take
// only this service's mutex, so an idle agent's poll never waits on a scheduling pass.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "master/server/agent_protocol.h"
#include "master/server/waiters.h"

namespace det::master::server {

class AgentService {
 public:
  // One agent as the scheduler and the API see it.
  struct Agent {
    std::string id;
    std::string resource_pool = "default";
    std::string hostname;
    std::string address = "127.0.0.1";               // where its processes are reached (rendezvous)
    nlohmann::json slots = nlohmann::json::array();  // [{id, type, brand, uuid}]
    std::vector<std::string> container_runtimes;     // "podman" / "docker": it runs images
    int64_t registered_time = 0;
    int64_t last_seen = 0;
    bool connected = false;
  };

  // What a registration tells the allocations service, which reconciles its allocations with it.
  struct Registration {
    int64_t command_seq = 0;         // the last command the agent acknowledged
    std::set<std::string> running;   // allocation ids the agent says still run
    std::set<std::string> starting;  // allocation ids whose start command is not yet acked
  };

  // Called with an error (e.g. the pool is unknown) to refuse a registration.
  using PoolCheck = std::function<Status(const std::string& agent_id, const std::string& pool)>;
  template <typename T>
  using Reply = std::function<void(Result<T>)>;

  AgentService(const Clock* clock, Waiters* waiters, int64_t agent_timeout_seconds);

  // Registers the agent or refreshes it (it may have restarted, or the master may have).
  Result<Registration> Register(const std::string& agent_id, const nlohmann::json& body,
                                const PoolCheck& check_pool) EXCLUDES(mu_);
  // The agent's commands after `after`, at once when there are any, else when one is pushed,
  // the agent must re-register, or `timeout_ms` passes (empty list). Polls end within half of
  // agent_timeout, so an abandoned poll of a dead agent cannot keep it in contact for long.
  void PollCommands(const std::string& agent_id, int64_t after, int64_t timeout_ms,
                    Reply<nlohmann::json> reply) EXCLUDES(mu_);
  // Queues a command for the agent; false when the agent is unknown.
  bool Push(const std::string& agent_id, const AgentCommand& command) EXCLUDES(mu_);
  // Contact from the agent (an event post). Unavailable when it is not registered: events from
  // before a master restart must be retried after it registers, never dropped.
  Status Touch(const std::string& agent_id) EXCLUDES(mu_);
  // Agents silent for longer than agent_timeout (and with no open poll) are marked lost; their
  // commands are dropped and their polls told to register again. Returns their ids.
  std::vector<std::string> ExpireLost() EXCLUDES(mu_);
  // Every agent, by id; or one.
  std::vector<Agent> List() const EXCLUDES(mu_);
  std::optional<Agent> Find(const std::string& agent_id) const EXCLUDES(mu_);
  // Drops the agent from the lists (a provisioner ended it); it may register again.
  void Forget(const std::string& agent_id) EXCLUDES(mu_);
  // Long polls answer at once from now on (the HTTP server drains).
  void BeginShutdown() EXCLUDES(mu_);

 private:
  struct Record {
    Agent agent;
    std::deque<nlohmann::json> commands;  // unacknowledged, each with "seq"
    int64_t next_seq = 1;
    int open_polls = 0;      // command long polls in progress (contact while > 0)
    bool forgotten = false;  // Forget: not listed until it registers again
  };
  using PollStep = std::shared_ptr<std::function<bool(bool final)>>;
  void LongPollLocked(const std::string& agent_id, Waiters::TimePoint deadline, PollStep step,
                      bool final) REQUIRES(mu_);
  void NotifyLocked(const std::string& agent_id) REQUIRES(mu_);
  int64_t Now() const { return clock_->NowMicros(); }

  const Clock* clock_;
  Waiters* waiters_;
  const int64_t agent_timeout_seconds_;

  mutable Mutex mu_;
  std::map<std::string, Record> agents_ GUARDED_BY(mu_);
  bool draining_ GUARDED_BY(mu_) = false;
};

}  // namespace det::master::server
