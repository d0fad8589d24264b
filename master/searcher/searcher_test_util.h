#pragma once
// Test helpers for the search-method tests: configs from YAML snippets and shape checks.

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "master/config/experiment_config.h"
#include "master/searcher/simulate.h"

namespace det::master::searcher::testing {

inline constexpr char kDefaultHparams[] =
    "  x: {type: int, minval: 0, maxval: 10, count: 3}\n"
    "  lr: {type: log, minval: -4, maxval: -1, base: 10, count: 2}\n"
    "  bs: 32\n";

// A parsed config; `searcher_yaml` is the flow map after "searcher: ".
inline config::ExperimentConfig Config(const std::string& searcher_yaml, uint32_t seed = 0,
                                       const std::string& hparams_yaml = kDefaultHparams) {
  std::string yaml = "entrypoint: model_def:Trial\nrecords_per_epoch: 1000\nhyperparameters:\n" +
                     hparams_yaml +
                     "searcher: " + searcher_yaml + "\n";
  config::ConfigDefaults defaults;
  defaults.experiment_seed = seed;
  auto cfg = config::ParseExperimentConfig(yaml, defaults);
  EXPECT_TRUE(cfg.ok()) << cfg.status().ToString() << "\n" << yaml;
  return cfg.ok() ? *cfg : config::ExperimentConfig{};
}

inline SimulateResult RunSearch(const config::ExperimentConfig& cfg, SimulateOptions options = {}) {
  options.round_trip = true;  // every scenario also checks snapshot/restore after each event
  auto result = Simulate(cfg, options);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  if (!result.ok()) return SimulateResult{};
  EXPECT_EQ(result->shutdowns, 1);
  return std::move(result).value();
}

// Metrics given per trial in creation order (constant for all of its reports).
inline std::function<double(int64_t, int64_t)> PerTrial(std::vector<double> values) {
  return [values](int64_t index, int64_t) {
    return static_cast<size_t>(index) < values.size() ? values[static_cast<size_t>(index)]
                                                      : 1e9;
  };
}

inline std::vector<std::vector<uint64_t>> Lengths(const SimulateResult& r) {
  std::vector<std::vector<uint64_t>> out;
  for (const auto& t : r.trials) out.push_back(t.lengths);
  return out;
}

using Shapes = std::map<std::string, int64_t>;

}  // namespace det::master::searcher::testing
