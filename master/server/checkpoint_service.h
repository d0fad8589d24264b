#pragma once
// CheckpointService: the checkpoint registry. Records checkpoints that trials report, answers
// lists and lookups, edits metadata, applies an experiment's GC policy and deletes checkpoint
// files through its CheckpointGcRunner (persisted, retried requests). It keeps no runtime state
// besides that runner, so it needs no lock of its own and never waits on the runtime loop;
// whether a reporting allocation still owns its trial is the experiments service's check (from
// the RuntimeView), made before Record.

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "master/server/checkpoint_gc_runner.h"
#include "master/store/store.h"

namespace det::master::server {

class CheckpointService {
 public:
  // `python` and `harness_dir` run the Python GC task and the storage reader.
  CheckpointService(store::Store* store, const Clock* clock, std::string python,
                    std::string harness_dir);

  // Starts and stops the GC runner (requests left by an earlier run resume on Start).
  void Start();
  void Stop();

  // Checks a reported checkpoint: a uuid and an integer metadata.steps_completed, which it
  // copies into the row.
  static Status Validate(store::CheckpointRow* row);
  // Stores a validated checkpoint of a known trial: state defaults to COMPLETED (a STATE_ prefix
  // is dropped), report time to now, size to the sum of its resources' sizes.
  Status Record(store::CheckpointRow row);

  Result<store::CheckpointRow> GetCheckpoint(const std::string& uuid);
  Result<std::vector<store::CheckpointRow>> ListExperimentCheckpoints(int64_t experiment_id);
  Result<std::vector<store::CheckpointRow>> ListTrialCheckpoints(int64_t trial_id);
  // The trial's COMPLETED checkpoint with the most steps (the latest of equals); nullopt if none.
  Result<std::optional<store::CheckpointRow>> LatestCompleted(int64_t trial_id);

  // Links a trial to a checkpoint it used (both must exist).
  Status AddTrialSourceInfo(const store::TrialSourceInfoRow& row);
  // Metrics of the trials linked to a checkpoint (source_type "" = any, group "" = all), by
  // trial then step, at most 1000 per trial.
  Result<std::vector<store::MetricRow>> CheckpointTrialMetrics(const std::string& uuid,
                                                               const std::string& source_type,
                                                               const std::string& group);

  Status DeleteCheckpoints(const std::vector<std::string>& uuids);
  Status RemoveCheckpointFiles(const std::vector<std::string>& uuids,
                               const std::vector<std::string>& globs);
  // Records what a GC task left of each checkpoint: empty -> DELETED, else PARTIALLY_DELETED.
  Status PatchCheckpointResources(const std::string& uuid, const nlohmann::json& resources);
  Result<nlohmann::json> SetCheckpointMetadata(const std::string& uuid,
                                               const nlohmann::json& metadata);
  // The checkpoint's files as a tar.gz, read from storage the master cannot read itself (s3,
  // gcs, azure, hdfs) by the Python helper determined.exec.checkpoint_tar.
  Result<std::string> ArchiveCheckpointFromStorage(const nlohmann::json& storage,
                                                   const std::string& uuid);

  // Applies the experiment's GC policy (reference architecture §6.3): submits the deletion of
  // every checkpoint it does not keep.
  Status CollectExperimentCheckpoints(int64_t experiment_id);
  // Submits the deletion of every checkpoint of the experiment not yet DELETED, then of the
  // experiment's rows.
  Status DeleteExperimentFiles(int64_t experiment_id, const nlohmann::json& experiment_config);
  // compat11: submits the deletion of the experiment's TensorBoard files from its checkpoint
  // storage (DELETE /api/v1/experiments/{id}/tensorboard-files); checkpoints stay.
  Status DeleteTensorboardFiles(int64_t experiment_id, const nlohmann::json& experiment_config);
  // Waits until no checkpoint deletion is pending (tests, shutdown).
  bool WaitForCheckpointGc(int64_t timeout_ms);

 private:
  // Submits deletions grouped by experiment (each with its own storage config).
  Status SubmitDeletions(const std::vector<std::string>& uuids,
                         const std::vector<std::string>& globs);

  store::Store* const store_;
  const Clock* const clock_;
  const std::string python_;
  const std::string harness_dir_;
  const std::unique_ptr<CheckpointGcRunner> gc_;
};

}  // namespace det::master::server
