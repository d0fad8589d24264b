#pragma once
// Searcher: the pure hyperparameter-search engine. Events in (trial created, validation
// completed, trial exited), actions out (create a trial, validate after an absolute length,
// close a trial, shut down). No I/O, no clock; its whole state, RNG included, snapshots to JSON
// and restores to an identical searcher. Not thread-safe: the master calls it under its lock.
//
// This follows the operations era of Determined's searcher (see
// reference/determined-search-and-scheduling.md §1, §2.1): every created trial receives
// `ValidateAfter(max_length)`; when that validation completes the trial is closed.

#include <cstdint>
#include <memory>
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
  virtual std::vector<Action> TrialExitedEarly(const std::string& request_id,
                                               ExitedReason reason) = 0;
  // The trial's process ended for good (it will not run again).
  virtual std::vector<Action> TrialExited(const std::string& request_id) = 0;
  // `progress` is in units of the op length (raw units trained).
  virtual void SetTrialProgress(const std::string& request_id, double units) = 0;
  // Experiment progress in [0, 1].
  virtual double Progress() const = 0;
  virtual nlohmann::json Snapshot() const = 0;
};

}  // namespace det::master::searcher
