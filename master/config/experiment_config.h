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

  // Method-specific fields (also in `defaulted["searcher"]`, with their defaults filled in).
  std::optional<std::string> time_metric;   // adaptive_asha / async_halving (0.38)
  std::optional<int64_t> max_time;          // adaptive_asha / async_halving (0.38)
  std::string mode = "standard";            // adaptive_asha / adaptive / adaptive_simple
  double divisor = 4;
  int64_t max_rungs = 5;
  std::vector<int64_t> bracket_rungs;
  bool stop_once = false;
  int64_t num_rungs = 0;                    // async_halving / sync_halving
  std::optional<Length> budget;             // adaptive / sync_halving (legacy step_budget)
  bool train_stragglers = true;
  int64_t population_size = 0;              // pbt
  int64_t num_rounds = 0;
  std::optional<Length> length_per_round;   // pbt (legacy steps_per_round)
  double truncate_fraction = 0;             // pbt replace_function
  double resample_probability = 0;          // pbt explore_function
  double perturb_factor = 0;
};

struct ResourcesConfig {
  int64_t slots_per_trial = 1;
  std::optional<int64_t> max_slots;
  double weight = 1;
  std::optional<int64_t> priority;
  std::string resource_pool;
  nlohmann::json shm_size;            // null, bytes, or a size string such as "4G"
  nlohmann::json devices = nlohmann::json::array();
  bool native_parallel = false;
  std::optional<bool> is_single_node;
};

struct BindMount {
  std::string host_path;
  std::string container_path;
  bool read_only = false;
  std::string propagation = "rprivate";
};

// environment: per-device values are keyed cpu / cuda / rocm (the legacy key `gpu` means cuda).
struct EnvironmentConfig {
  std::map<std::string, std::string> image;
  std::map<std::string, std::vector<std::string>> environment_variables;
  bool force_pull_image = false;
  nlohmann::json registry_auth;       // null or {username, password, server, email, ...}
  std::map<std::string, int64_t> ports;
  std::vector<std::string> add_capabilities;
  std::vector<std::string> drop_capabilities;
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

  // Issue #3: the rest of the model (each also present, defaulted, in `defaulted`).
  bool entrypoint_is_trial_class = false;  // legacy "module:Class" form
  nlohmann::json data = nlohmann::json::object();
  EnvironmentConfig environment;
  std::vector<BindMount> bind_mounts;
  nlohmann::json optimizations;
  nlohmann::json profiling;
  nlohmann::json data_layer;
  nlohmann::json log_policies;
  int64_t preemption_timeout = 3600;
  // hyperparameters.global_batch_size when it is a constant positive integer.
  std::optional<int64_t> global_batch_size;
};

// Values the master supplies for defaults that are not constants.
struct ConfigDefaults {
  nlohmann::json checkpoint_storage;  // the master's checkpoint_storage, merged under the expconf's
  uint32_t experiment_seed = 0;       // used when reproducibility.experiment_seed is absent
  std::string default_name = "Experiment";
  // The master's task_container_defaults, merged under the experiment's: environment_variables
  // (list or per-device map), image, force_pull_image, registry_auth, add_capabilities,
  // drop_capabilities, bind_mounts, devices, log_policies, shm_size. Null means none.
  nlohmann::json task_container_defaults;
  int64_t preemption_timeout = 3600;  // seconds; task_container_defaults.preemption_timeout
};

// Parses and validates `yaml_text`. On failure the status is kInvalidArgument and its message
// lists every problem, one per line, e.g.
//   "searcher.max_trials: required for searcher 'random'".
Result<ExperimentConfig> ParseExperimentConfig(std::string_view yaml_text,
                                               const ConfigDefaults& defaults);

// Rebuilds the typed config from a stored defaulted JSON object (no defaulting again).
Result<ExperimentConfig> ExperimentConfigFromJson(const nlohmann::json& defaulted);

// Converts YAML text into JSON; syntax errors name line and column. Inputs nested deeper than
// kMaxYamlDepth or expanding (through aliases) to more than kMaxYamlNodes nodes are rejected.
inline constexpr int kMaxYamlDepth = 200;
inline constexpr int64_t kMaxYamlNodes = 1000000;
Result<nlohmann::json> YamlToJson(std::string_view yaml_text);

// Converts `length` to batches. Batches convert as they are; records need
// `global_batch_size` (> 0) and round up; epochs need `records_per_epoch` (> 0) and
// `global_batch_size` and round up; unitless lengths are returned unchanged.
Result<uint64_t> LengthToBatches(const Length& length, int64_t records_per_epoch,
                                 std::optional<int64_t> global_batch_size);

// The test-mode config of `det experiment create --test` (reference §9) built from the user's
// (not yet defaulted) config: searcher single with max_length {batches: 1}, scheduling_unit 1,
// min_validation_period {batches: 1}, max_restarts 0, every save_* 0, and each hyperparameter
// replaced by a constant sampled from its range with `seed`.
nlohmann::json MakeTestModeConfig(const nlohmann::json& config, uint64_t seed);

}  // namespace det::master::config
