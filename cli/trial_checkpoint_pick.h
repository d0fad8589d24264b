#pragma once
// `det trial download --best | --latest`: which of a trial's checkpoints to download, chosen
// from the Checkpoint objects of GET /api/v1/trials/{id}/checkpoints. Pure, no I/O.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/status.h"

namespace det::cli {

struct TrialCheckpointPick {
  bool latest = false;  // else best
  std::string sort_by;  // best by this validation metric; empty: the searcher metric
  std::optional<bool> smaller_is_better;  // required with sort_by; else the experiment's
};

// Only downloadable checkpoints count (STATE_COMPLETED, STATE_PARTIALLY_DELETED). Latest: the
// most steps_completed. Best: the lowest (or highest) metric; checkpoints without it are skipped.
// NotFound when none qualifies; InvalidArgument for sort_by without smaller_is_better.
Result<nlohmann::json> PickTrialCheckpoint(const nlohmann::json& checkpoints,
                                           const TrialCheckpointPick& pick);

}  // namespace det::cli
