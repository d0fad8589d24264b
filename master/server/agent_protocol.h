#pragma once
// The agent protocol's messages as the master sends and receives them (api/agent-protocol.md):
// typed commands, serialized only here, and typed events, parsed and checked only here.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"

namespace det::master::server {

// Run an allocation's process group (one rank) on the agent.
struct StartCommand {
  std::string allocation_id;
  std::string task_id;
  std::string task_type;  // a command's, notebook's, ... (TaskTypeName); "" for a trial
  std::vector<int> slot_ids;
  nlohmann::json entrypoint;                      // a string or an argv list
  nlohmann::json env = nlohmann::json::object();  // {"DET_...": "..."}
  std::optional<nlohmann::json> container;        // the image and its options
};

// SIGKILL to the allocation's process group.
struct KillCommand {
  std::string allocation_id;
};

using AgentCommand = std::variant<StartCommand, KillCommand>;

// The command's JSON, without its sequence number (the agent service numbers it).
nlohmann::json CommandJson(const AgentCommand& command);

// One event an agent posts about an allocation.
struct AgentEvent {
  enum class Type { kStarted, kExited, kOther };
  Type type = Type::kOther;
  std::string allocation_id;
  int exit_code = -1;  // kExited: the process's exit status (128+N for signal N)
  std::string error;   // kExited: why it failed to start, if it did
  nlohmann::json raw;  // as posted (a task's events are read from it)
};

// The events of a `{events: [...]}` body; an error naming the first malformed event.
Result<std::vector<AgentEvent>> ParseAgentEvents(const nlohmann::json& body);

}  // namespace det::master::server
