#pragma once
// Searcher: the pure hyperparameter-search engine. Events in (trial created, validation
// completed, trial exited), actions out (create a trial, validate after an absolute length,
// close a trial, shut down). No I/O, no clock; its whole state, RNG included, snapshots to JSON
// and restores to an identical searcher. Not thread-safe: the master calls it under its lock.
//
// This follows the operations era of Determined's searcher (see
// reference/determined-search-and-scheduling.md §1-3): trials train to the absolute lengths of
// their `ValidateAfter` ops and report the searcher metric; the ASHA searchers configured with
// `time_metric` + `max_time` also take 0.38-style metrics reports. Create picks the method:
// single/random (RandomSearcher), grid, async_halving, adaptive_asha, adaptive, adaptive_simple
// and pbt (MethodSearcher + a SearchMethod). docs/searchers.md describes every rule.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "master/config/experiment_config.h"

namespace det::master::searcher {

struct CreateAction {
  std::string request_id;  // UUIDv4 text drawn from the searcher RNG
  uint32_t trial_seed = 0;
  nlohmann::json hparams;  // sampled values (nested groups are objects)
  // PBT only: the trial starts from the latest checkpoint of the trial created by this request
  // id (the master turns it into the child's warm-start checkpoint). The child's own length
  // still counts from zero: its ValidateAfter lengths are relative to its own start.
  std::optional<std::string> parent_request_id;
};
struct ValidateAfterAction {
  std::string request_id;
  uint64_t length = 0;     // absolute: total units trained before validating
};
struct CloseAction {
  std::string request_id;
};
struct ShutdownAction {
  bool cancel = false;
  bool failure = false;
};
using Action = std::variant<CreateAction, ValidateAfterAction, CloseAction, ShutdownAction>;

enum class ExitedReason { kErrored, kUserCanceled, kInvalidHp, kInitInvalidHp, kUserRequestedStop };

class Searcher {
 public:
  // REQUIRES: `config` already validated by ParseExperimentConfig.
  static Result<std::unique_ptr<Searcher>> Create(const config::ExperimentConfig& config);
  static Result<std::unique_ptr<Searcher>> Restore(const config::ExperimentConfig& config,
                                                   const nlohmann::json& snapshot);
  virtual ~Searcher() = default;

  virtual std::vector<Action> InitialOperations() = 0;
  virtual std::vector<Action> TrialCreated(const std::string& request_id) = 0;
  // `metric` is the raw searcher metric as reported; `length` the op's length.
  virtual Result<std::vector<Action>> ValidationCompleted(const std::string& request_id,
                                                          double metric, uint64_t length) = 0;
  // 0.38-style event: a trial reported a validation metrics dict. Searchers configured with
  // `time_metric` + `max_time` (adaptive_asha / async_halving) decide from the searcher metric and
  // the time metric in `metrics` (a Stop is a Close action); every other searcher ignores it.
  virtual Result<std::vector<Action>> ValidationMetricsReported(const std::string& request_id,
                                                                const nlohmann::json& metrics) {
    return std::vector<Action>();
  }
  virtual std::vector<Action> TrialExitedEarly(const std::string& request_id,
                                               ExitedReason reason) = 0;
  // The trial's process ended for good (it will not run again).
  virtual std::vector<Action> TrialExited(const std::string& request_id) = 0;
  // `progress` is in units of the op length (raw units trained).
  virtual void SetTrialProgress(const std::string& request_id, double units) = 0;
  // Experiment progress in [0, 1].
  virtual double Progress() const = 0;
  virtual nlohmann::json Snapshot() const = 0;
  // A copy of the whole state, independent of this one: the searcher journal's writer takes a
  // full snapshot of it on its own thread while this one goes on deciding.
  virtual std::unique_ptr<Searcher> Clone() const = 0;
};

}  // namespace det::master::searcher
