#pragma once
// RungView: the rungs of an adaptive_asha or async_halving search as its searcher holds them,
// for the web UI's rung view (GET /api/v1/experiments/{id}/searcher/rungs). Read from the
// searcher's snapshot (AshaPromotionMethod / AshaStoppingMethod, one per bracket of an
// adaptive_asha TournamentMethod) and the bracket plan the config gives (bracket_math.h), so
// it shows what the searcher decided, not an estimate from the metrics. Pure.
//
// Outcome of a trial in a rung:
//   promoted   went on to the next rung (promotion ASHA: the searcher promoted it; stop-based:
//              it was not stopped there)
//   stopped    the searcher closed it at this rung
//   completed  reached the top rung (the bracket's full length)
//   waiting    in the rung, neither promoted nor stopped yet (it may still be promoted)
//   exited     ended on its own (error, cancel, invalid hyperparameters) at this rung
//   running    training towards this rung (not in it yet)

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/searcher/method_params.h"

namespace det::master::searcher {

struct RungTrialView {
  std::string request_id;
  std::optional<double> metric;  // as the trial reported it (not negated); none while running
  std::string outcome;
};

struct RungLevelView {
  int index = 0;
  uint64_t length = 0;                // units of max_length (or max_time)
  std::vector<RungTrialView> trials;  // by metric, best first; running trials last
};

struct BracketView {
  int index = 0;
  int64_t max_trials = 0;
  std::vector<RungLevelView> rungs;
};

// `searcher_snapshot` is Searcher::Snapshot() (with "method" inside). kInvalidArgument for a
// searcher without rungs (only adaptive_asha and async_halving have them) or a snapshot that
// does not match the config.
Result<std::vector<BracketView>> BuildRungViews(const MethodParams& params,
                                                const nlohmann::json& searcher_snapshot);

nlohmann::json RungViewsToJson(const std::vector<BracketView>& brackets);

}  // namespace det::master::searcher
