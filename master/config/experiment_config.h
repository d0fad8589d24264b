#pragma once
// ExperimentConfig: the typed, fully defaulted experiment configuration. Pure: parses YAML text
// and validates it with no I/O. Every problem is reported, each naming its field path, the value
// and the rule. Issue #3 grows this into the full config model; the shape here is what the rest
// of the master relies on.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace det::master::config {

struct Length {
  enum class Unit { kBatches, kRecords, kEpochs, kUnitless };
  Unit unit = Unit::kUnitless;
  uint64_t value = 0;
};

// One hyperparameter. A nested group holds its children in `nested` (sorted by name).
struct Hyperparameter {
  enum class Type { kConst, kInt, kDouble, kLog, kCategorical, kNested };
  Type type = Type::kConst;
  nlohmann::json val;                 // kConst
  double minval = 0, maxval = 0;      // kInt / kDouble / kLog (ints hold integral values)
  double base = 10;                   // kLog
  std::optional<int64_t> count;       // grid
  std::vector<nlohmann::json> vals;   // kCategorical
  std::map<std::string, Hyperparameter> nested;  // kNested
};
using Hyperparameters = std::map<std::string, Hyperparameter>;

struct SearcherConfig {
  std::string name;                   // single | random | ...
  std::string metric;
  bool smaller_is_better = true;
  std::optional<Length> max_length;
  int64_t max_trials = 1;
  int64_t max_concurrent_trials = 16;  // 0 = no limit
  std::optional<int64_t> source_trial_id;
  std::optional<std::string> source_checkpoint_uuid;
};

struct ResourcesConfig {
  int64_t slots_per_trial = 1;
  std::optional<int64_t> max_slots;
  double weight = 1;
  std::optional<int64_t> priority;
  std::string resource_pool;
};

struct ExperimentConfig {
  std::string name;
  std::string description;
  std::vector<std::string> labels;
  nlohmann::json entrypoint;          // string or list of strings
  Hyperparameters hyperparameters;
  SearcherConfig searcher;
  ResourcesConfig resources;
  int64_t max_restarts = 5;
  uint32_t experiment_seed = 0;
  // Defaulted storage object (type, host_path, save_*, ...); null when neither the experiment
  // nor ConfigDefaults sets one (the caller decides whether that is an error).
  nlohmann::json checkpoint_storage;
  nlohmann::json defaulted;           // the whole defaulted config, as stored and sent to trials

  // Further modelled top-level fields (all also present in `defaulted`).
  Length min_validation_period{Length::Unit::kBatches, 0};
  Length min_checkpoint_period{Length::Unit::kBatches, 0};
  int64_t scheduling_unit = 100;
  int64_t records_per_epoch = 0;
  bool perform_initial_validation = false;
  std::string checkpoint_policy = "best";  // best | all | none
  std::string workspace;
  std::string project;
  bool debug = false;
};

// Values the master supplies for defaults that are not constants.
struct ConfigDefaults {
  nlohmann::json checkpoint_storage;  // the master's checkpoint_storage, merged under the expconf's
  uint32_t experiment_seed = 0;       // used when reproducibility.experiment_seed is absent
  std::string default_name = "Experiment";
};

// Parses and validates `yaml_text`. On failure the status is kInvalidArgument and its message
// lists every problem, one per line, e.g.
//   "searcher.max_trials: required for searcher 'random'".
Result<ExperimentConfig> ParseExperimentConfig(std::string_view yaml_text,
                                               const ConfigDefaults& defaults);

// Rebuilds the typed config from a stored defaulted JSON object (no defaulting again).
Result<ExperimentConfig> ExperimentConfigFromJson(const nlohmann::json& defaulted);

// Converts YAML text into JSON; syntax errors name line and column.
Result<nlohmann::json> YamlToJson(std::string_view yaml_text);

}  // namespace det::master::config
