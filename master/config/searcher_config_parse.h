#pragma once
// Parsing of the `searcher` section. Every searcher name parses; fields specific to searchers
// not modelled in SearcherConfig pass through into the defaulted JSON unchanged.

#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "master/config/experiment_config.h"
#include "master/config/problems.h"

namespace det::master::config::internal {

// `batches_per_step` converts legacy step counts (`max_steps`, `target_trial_steps`,
// `step_budget`, `steps_per_round`) into `{batches: steps * batches_per_step}`.
SearcherConfig ParseSearcher(const nlohmann::json& in, int64_t batches_per_step,
                             nlohmann::json* defaulted, Problems* problems);

}  // namespace det::master::config::internal
