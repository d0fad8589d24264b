#pragma once
// Printing a trial's logs (`det trial logs`, `det experiment create -f`).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/session.h"
#include "common/status.h"

namespace det::cli {

struct TrialLogOptions {
  bool follow = false;
  std::optional<int64_t> head;  // first N lines
  std::optional<int64_t> tail;  // last N lines
  // Server-side filters as query parameters ("agentIds=a&levels=LOG_LEVEL_INFO"), "" = none.
  std::string filters;
  bool json_out = false;  // each log entry as JSON instead of its message
};

// The options Determined's `det trial logs` / `det experiment logs` take beyond -f/--head/
// --tail (--agent-id, --container-id, --rank-id, --timestamp-before/after, --level, --source,
// --stdtype, --json), added to `cmd`; `Finish` turns them into `filters`.
struct TrialLogFilterArgs {
  std::vector<std::string> agent_ids;
  std::vector<std::string> container_ids;
  std::vector<int64_t> rank_ids;
  std::string timestamp_before;
  std::string timestamp_after;
  std::string level;
  std::vector<std::string> sources;
  std::vector<std::string> stdtypes;
  bool json_out = false;

  void AddTo(CLI::App* cmd);
  // Sets options.filters and options.json_out.
  void Finish(TrialLogOptions& options) const;
};

// Prints each log entry's `message` verbatim; after a followed stream ends prints
// `Trial log stream ended. To reopen log stream, run: det trial logs -f <id>`.
Status PrintTrialLogs(Session& session, int64_t trial_id, const TrialLogOptions& options);

}  // namespace det::cli
