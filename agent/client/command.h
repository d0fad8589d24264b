#pragma once
// Commands the master queues for an agent (agent-protocol.md §2), parsed from JSON.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace det::agent {

struct Command {
  int64_t seq = 0;
  std::string type;  // "start" | "kill" | "signal"
  std::string allocation_id;
  // start
  std::string task_id;
  std::vector<int> slot_ids;
  nlohmann::json entrypoint;
  std::map<std::string, std::string> env;
  // The image and its options when the allocation runs in a container; null: a bare process.
  nlohmann::json container;
  // signal
  std::string signal;
  // Non-empty when the command is malformed; seq is still valid when parse_error says so.
  std::string parse_error;
};

// Parses one command. A command without a usable seq is an error; other problems are reported
// in Command::parse_error so the caller can still advance past it.
Result<Command> ParseCommand(const nlohmann::json& j);

// Parses a `{commands:[...]}` body.
Result<std::vector<Command>> ParseCommandsBody(const std::string& body);

// Reads an int64 that may be a JSON number or a decimal string.
Result<int64_t> JsonInt64(const nlohmann::json& j);

}  // namespace det::agent
