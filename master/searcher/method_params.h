#pragma once
// MethodParams: the method-specific searcher fields, read from `config.defaulted["searcher"]`
// with the defaults of reference/determined-search-and-scheduling.md §2-3 applied here (the
// config parser may or may not have defaulted them). Lengths (`budget`, `length_per_round`) may
// be a bare integer or a one-key map such as {"batches": 900}; the searcher works in whatever
// unit `max_length` uses. Pure.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/config/experiment_config.h"

namespace det::master::searcher {

struct MethodParams {
  std::string name;
  std::string metric;
  bool smaller_is_better = true;
  std::optional<uint64_t> max_length;  // searcher.max_length value
  int64_t max_trials = 1;
  int64_t max_concurrent_trials = 16;  // 0 = no limit

  // adaptive_asha / async_halving / adaptive / adaptive_simple
  std::string mode = "standard";  // aggressive | standard | conservative
  double divisor = 4;             // > 1
  int max_rungs = 5;
  std::vector<int> bracket_rungs;  // empty = derived from mode
  bool stop_once = false;
  int num_rungs = 0;             // async_halving (required there)
  uint64_t budget = 0;           // adaptive (required there)
  bool train_stragglers = true;  // accepted, unused (as in Determined)

  // 0.38 style: both set = decisions from reported metrics dicts.
  std::optional<double> max_time;
  std::string time_metric;

  // pbt
  int64_t population_size = 0;
  int64_t num_rounds = 0;
  uint64_t length_per_round = 0;
  double truncate_fraction = 0;
  double resample_probability = 0;
  double perturb_factor = 0;

  // adaptive_asha / async_halving: how new trials are drawn ("random" or "tpe").
  std::string sampler = "random";
  // tpe, and the tpe sampler (Optuna's TPESampler names and defaults)
  int64_t n_startup_trials = 10;
  int64_t n_ei_candidates = 24;
  double prior_weight = 1.0;
  bool consider_magic_clip = true;
  bool consider_endpoints = false;
  bool constant_liar = false;

  // random / tpe: `stopping: {type: median, check_every, ...}` (Optuna's MedianPruner names).
  bool median_stopping = false;
  uint64_t check_every = 0;
  int64_t stop_n_startup_trials = 5;
  uint64_t n_warmup_steps = 0;
  uint64_t interval_steps = 1;
  int64_t n_min_trials = 1;

  bool TimeMode() const { return max_time.has_value() && !time_metric.empty(); }
};

// Reads and checks the fields the configured method uses. Errors name the field, e.g.
// "searcher.divisor: must be > 1".
Result<MethodParams> ReadMethodParams(const config::ExperimentConfig& config);

}  // namespace det::master::searcher
