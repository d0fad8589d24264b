#pragma once
// Parsing of the `hyperparameters` section into typed Hyperparameters plus its defaulted JSON
// (bare values become `{type: const, val}`, log gets `base: 10`, nested groups stay maps).

#include <string_view>

#include <nlohmann/json.hpp>

#include "master/config/experiment_config.h"
#include "master/config/problems.h"

namespace det::master::config::internal {

// `in` is the section's value (null means empty). Writes the defaulted form to `*defaulted`.
Hyperparameters ParseHyperparameters(const nlohmann::json& in, std::string_view path,
                                     nlohmann::json* defaulted, Problems* problems);

// Records "<path>.count: required for searcher 'grid'" for each int/double/log without count.
void RequireGridCounts(const Hyperparameters& hps, std::string_view path, Problems* problems);

}  // namespace det::master::config::internal
