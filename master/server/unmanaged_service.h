#pragma once
// UnmanagedService: experiments and trials run by a script outside the cluster
// (determined.experimental.core_v2 in detached mode). The master records them like any other
// (their rows are ordinary experiment and trial rows, marked unmanaged in the store) but never
// schedules, restores or restarts them: the script creates its trial, starts it, heartbeats, and
// says when it completes or fails. The experiment's state follows its trials'
// (core::UnmanagedExperimentState). A running trial whose script stops heartbeating for
// `lost_after_micros` is marked ERROR, as Determined does after 5 minutes.
//
// Thread-safe: one mutex guards the cache of marks and serializes state changes, so a heartbeat,
// a state patch and the lost-trial check never interleave. It never calls into the Master.

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "master/server/master_config.h"
#include "master/store/store.h"

namespace det::master::server {

class UnmanagedService {
 public:
  struct Options {
    int64_t lost_after_micros = 5ll * 60 * 1000000;
    // How often the background thread looks for lost trials; 0 starts no thread (tests call
    // CheckLostTrials themselves).
    int64_t check_interval_ms = 30000;
  };

  struct CreateExperimentRequest {
    std::string config_yaml;
    std::optional<std::string> external_id;  // PUT /experiments/by-external-id/{id}
    bool validate_only = false;
  };
  struct CreatedExperiment {
    std::optional<int64_t> id;  // absent for validate_only
    nlohmann::json config;      // the defaulted config
    bool created = false;       // false: an existing experiment with the external id
  };

  struct CreateTrialRequest {
    int64_t experiment_id = 0;
    nlohmann::json hparams = nlohmann::json::object();
    std::optional<std::string> external_id;  // PUT /trials
  };

  struct StartedTrial {
    int64_t trial_run_id = 0;
    std::optional<std::string> latest_checkpoint;  // on a resumed run: the latest completed one
    int64_t steps_completed = 0;                   // that checkpoint's steps
  };

  struct ExperimentMark {
    std::optional<std::string> external_id;
  };

  // `config` supplies the defaults of experiment configs (checkpoint storage, ...); it must
  // outlive the service.
  UnmanagedService(store::Store* store, const Clock* clock, const MasterConfig* config,
                   Options options);
  UnmanagedService(store::Store* store, const Clock* clock, const MasterConfig* config)
      : UnmanagedService(store, clock, config, Options{}) {}
  ~UnmanagedService();
  UnmanagedService(const UnmanagedService&) = delete;
  UnmanagedService& operator=(const UnmanagedService&) = delete;

  // Validates the config (an entrypoint is not needed) and stores a PAUSED experiment. With an
  // external id already used, returns that experiment with its config replaced.
  Result<CreatedExperiment> CreateExperiment(const CreateExperimentRequest& req, int64_t owner_id);
  // Adds a PAUSED trial to an unmanaged experiment; with an external id already used in the
  // experiment, returns that trial.
  Result<int64_t> CreateTrial(const CreateTrialRequest& req);
  // Starts a new run of the trial: RUNNING, run id + 1. Without `resume`, a trial that was
  // started before is an error.
  Result<StartedTrial> StartTrial(int64_t trial_id, bool resume);
  // A heartbeat (no state) or a state change from the script.
  Status PatchTrial(int64_t trial_id, const std::optional<std::string>& state);
  // A metrics report for the trial's current run (`run_id` from StartTrial).
  Status ReportMetrics(int64_t trial_id, int64_t run_id, int64_t steps_completed,
                       const std::string& group, const nlohmann::json& metrics);
  // Progress in [0, 1], stored as the experiment's.
  Status ReportProgress(int64_t trial_id, double progress);

  // Marks every running trial whose script has been silent for lost_after_micros ERROR (ending
  // at its last activity) and writes a line saying why into its logs. Returns their ids.
  Result<std::vector<int64_t>> CheckLostTrials();

  // Lookups, from memory once the marks are loaded.
  std::optional<ExperimentMark> FindExperiment(int64_t experiment_id);
  bool IsUnmanagedTrial(int64_t trial_id);
  // The unmanaged trial that `task_id` belongs to.
  std::optional<int64_t> TrialOfTask(const std::string& task_id);

 private:
  struct TrialMark {
    int64_t experiment_id = 0;
    std::string task_id;
  };

  // REQUIRES: mu_ held.
  Status LoadLocked();
  Result<store::TrialRow> UnmanagedTrialLocked(int64_t trial_id);
  // Moves the experiment to the state its trials add up to.
  Status UpdateExperimentStateLocked(int64_t experiment_id);
  void CheckerLoop();

  store::Store* store_;
  const Clock* clock_;
  const MasterConfig* config_;
  Options options_;

  std::mutex mu_;
  bool loaded_ = false;
  std::map<int64_t, ExperimentMark> experiments_;
  std::map<int64_t, TrialMark> trials_;
  std::map<std::string, int64_t> trial_by_task_;

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread checker_;
};

}  // namespace det::master::server
