#pragma once
// Random sampling of hyperparameters with Determined's exact RNG consumption
// (reference/determined-search-and-scheduling.md §1.2-1.3): names visited in byte-wise sorted
// order, nested groups sorted too.

#include <nlohmann/json.hpp>

#include "master/config/experiment_config.h"
#include "master/searcher/nprand.h"

namespace det::master::searcher {

nlohmann::json SampleHyperparameters(const config::Hyperparameters& hps, NpRand& rng);

}  // namespace det::master::searcher
