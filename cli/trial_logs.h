#pragma once
// Printing a trial's logs (`det trial logs`, `det experiment create -f`).

#include <cstdint>
#include <optional>

#include "cli/session.h"
#include "common/status.h"

namespace det::cli {

struct TrialLogOptions {
  bool follow = false;
  std::optional<int64_t> head;  // first N lines
  std::optional<int64_t> tail;  // last N lines
};

// Prints each log entry's `message` verbatim; after a followed stream ends prints
// `Trial log stream ended. To reopen log stream, run: det trial logs -f <id>`.
Status PrintTrialLogs(Session& session, int64_t trial_id, const TrialLogOptions& options);

}  // namespace det::cli
