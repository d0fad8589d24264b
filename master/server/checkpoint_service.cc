#include "master/server/checkpoint_service.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <map>
#include <set>
#include <utility>

#include "common/subprocess.h"
#include "master/checkpoint_gc/checkpoint_gc.h"
#include "master/config/searcher_metric.h"
#include "master/core/uuid_check.h"
#include "master/server/model_service.h"

namespace det::master::server {

using nlohmann::json;

namespace {

constexpr char kCompleted[] = "COMPLETED";
constexpr char kDeleted[] = "DELETED";
constexpr char kPartiallyDeleted[] = "PARTIALLY_DELETED";

// A checkpoint's size: the sum of its resources' sizes (numbers or decimal strings).
int64_t SizeOf(const json& resources) {
  int64_t size = 0;
  if (!resources.is_object()) return 0;
  for (auto& [k, v] : resources.items()) {
    if (v.is_string()) size += std::atoll(v.get<std::string>().c_str());
    if (v.is_number_integer()) size += v.get<int64_t>();
  }
  return size;
}

}  // namespace

CheckpointService::CheckpointService(store::Store* store, const Clock* clock, std::string python,
                                     std::string harness_dir,
                                     std::optional<std::vector<std::string>> storage_roots)
    : store_(store),
      clock_(clock),
      python_(std::move(python)),
      harness_dir_(std::move(harness_dir)),
      gc_(std::make_unique<CheckpointGcRunner>(store, clock, python_, harness_dir_,
                                               std::move(storage_roots))) {}

void CheckpointService::Start() { gc_->Start(); }

void CheckpointService::Stop() { gc_->Stop(); }

Status CheckpointService::Validate(store::CheckpointRow* row) {
  if (row->uuid.empty()) return InvalidArgument("uuid: required");
  DET_RETURN_IF_ERROR(core::CheckCheckpointUuid(row->uuid));
  if (!row->metadata.is_object() || !row->metadata.contains("steps_completed") ||
      !row->metadata["steps_completed"].is_number_integer()) {
    return InvalidArgument("metadata.steps_completed: required integer");
  }
  row->steps_completed = row->metadata["steps_completed"].get<int64_t>();
  return Status::Ok();
}

Status CheckpointService::Record(store::CheckpointRow row) {
  DET_RETURN_IF_ERROR(Validate(&row));
  if (row.state.empty()) row.state = kCompleted;
  if (row.state.rfind("STATE_", 0) == 0) row.state = row.state.substr(6);
  if (row.report_time == 0) row.report_time = clock_->NowMicros();
  row.size = SizeOf(row.resources);
  // The store upserts on uuid: only the checkpoint's own trial may report it again (another
  // trial's report is PermissionDenied and changes nothing).
  Result<store::CheckpointRow> existing = store_->GetCheckpoint(row.uuid);
  if (existing.ok() && existing->trial_id != row.trial_id) {
    return PermissionDenied("checkpoint " + row.uuid + " belongs to trial " +
                            std::to_string(existing->trial_id) + ", not to trial " +
                            std::to_string(row.trial_id) + " that reports it");
  }
  if (!existing.ok() && existing.status().code() != StatusCode::kNotFound) {
    return existing.status();
  }
  return store_->AddCheckpoint(row);
}

Result<store::CheckpointRow> CheckpointService::GetCheckpoint(const std::string& uuid) {
  return store_->GetCheckpoint(uuid);
}

Result<std::vector<store::CheckpointRow>> CheckpointService::ListExperimentCheckpoints(
    int64_t experiment_id) {
  DET_RETURN_IF_ERROR(store_->GetExperiment(experiment_id).status());
  return store_->ListCheckpointsForExperiment(experiment_id);
}

Result<std::vector<store::CheckpointRow>> CheckpointService::ListTrialCheckpoints(
    int64_t trial_id) {
  DET_RETURN_IF_ERROR(store_->GetTrial(trial_id).status());
  return store_->ListCheckpointsForTrial(trial_id);
}

Result<std::optional<store::CheckpointRow>> CheckpointService::LatestCompleted(int64_t trial_id) {
  DET_ASSIGN_OR_RETURN(std::vector<store::CheckpointRow> ckpts,
                       store_->ListCheckpointsForTrial(trial_id));
  std::optional<store::CheckpointRow> best;
  for (auto& c : ckpts) {
    if (c.state != kCompleted) continue;
    if (!best || c.steps_completed >= best->steps_completed) best = std::move(c);
  }
  return best;
}

Status CheckpointService::AddTrialSourceInfo(const store::TrialSourceInfoRow& row) {
  DET_RETURN_IF_ERROR(store_->GetTrial(row.trial_id).status());
  DET_RETURN_IF_ERROR(store_->GetCheckpoint(row.checkpoint_uuid).status());
  return store_->AddTrialSourceInfo(row);
}

Result<std::vector<store::MetricRow>> CheckpointService::CheckpointTrialMetrics(
    const std::string& uuid, const std::string& source_type, const std::string& group) {
  DET_RETURN_IF_ERROR(store_->GetCheckpoint(uuid).status());
  DET_ASSIGN_OR_RETURN(std::vector<store::TrialSourceInfoRow> links,
                       store_->ListTrialSourceInfos(uuid, source_type));
  std::vector<store::MetricRow> out;
  for (const auto& l : links) {
    DET_ASSIGN_OR_RETURN(std::vector<store::MetricRow> rows,
                         store_->ListMetrics(l.trial_id, group));
    // At most 1000 reports per linked trial, as Determined answers.
    if (rows.size() > 1000) rows.resize(1000);
    out.insert(out.end(), rows.begin(), rows.end());
  }
  return out;
}

Status CheckpointService::SubmitDeletions(const std::vector<std::string>& uuids,
                                          const std::vector<std::string>& globs) {
  for (const auto& uuid : uuids) {
    DET_RETURN_IF_ERROR(core::CheckCheckpointUuid(uuid, "checkpointUuids"));
  }
  DET_RETURN_IF_ERROR(RefuseRegisteredCheckpoints(store_, uuids, "deleted"));
  std::map<int64_t, std::vector<std::string>> by_experiment;
  std::map<int64_t, json> storage;
  for (const auto& uuid : uuids) {
    DET_ASSIGN_OR_RETURN(store::CheckpointRow c, store_->GetCheckpoint(uuid));
    DET_ASSIGN_OR_RETURN(store::TrialRow t, store_->GetTrial(c.trial_id));
    if (!storage.count(t.experiment_id)) {
      DET_ASSIGN_OR_RETURN(store::ExperimentRow e, store_->GetExperiment(t.experiment_id));
      storage[t.experiment_id] = e.config.value("checkpoint_storage", json::object());
    }
    by_experiment[t.experiment_id].push_back(uuid);
  }
  for (const auto& [exp_id, ids] : by_experiment) {
    DET_RETURN_IF_ERROR(gc_->Submit(exp_id, storage[exp_id], ids, globs));
  }
  return Status::Ok();
}

Status CheckpointService::DeleteCheckpoints(const std::vector<std::string>& uuids) {
  if (uuids.empty()) return InvalidArgument("checkpointUuids: must not be empty");
  return SubmitDeletions(uuids, {});
}

Status CheckpointService::RemoveCheckpointFiles(const std::vector<std::string>& uuids,
                                                const std::vector<std::string>& globs) {
  if (uuids.empty()) return InvalidArgument("checkpointUuids: must not be empty");
  if (globs.empty()) return Status::Ok();  // an empty glob list removes nothing
  return SubmitDeletions(uuids, globs);
}

Status CheckpointService::PatchCheckpointResources(const std::string& uuid, const json& resources) {
  if (!resources.is_object()) return InvalidArgument("resources: must be an object");
  DET_ASSIGN_OR_RETURN(store::CheckpointRow c, store_->GetCheckpoint(uuid));
  DET_RETURN_IF_ERROR(RefuseRegisteredCheckpoints(store_, {uuid}, "patched"));
  c.state = resources.empty() ? kDeleted : kPartiallyDeleted;
  c.resources = resources;
  c.size = SizeOf(resources);
  return store_->AddCheckpoint(c);
}

Result<json> CheckpointService::SetCheckpointMetadata(const std::string& uuid,
                                                      const json& metadata) {
  if (!metadata.is_object()) return InvalidArgument("checkpoint.metadata: must be an object");
  DET_ASSIGN_OR_RETURN(store::CheckpointRow c, store_->GetCheckpoint(uuid));
  if (!metadata.contains("steps_completed")) {
    return InvalidArgument("checkpoint.metadata.steps_completed: must be kept");
  }
  c.metadata = metadata;
  DET_RETURN_IF_ERROR(store_->AddCheckpoint(c));
  return c.metadata;
}

Result<std::string> CheckpointService::ArchiveCheckpointFromStorage(const json& storage,
                                                                    const std::string& uuid) {
  // The helper uses the same storage managers as the trials, so every backend they write to can
  // be read back here; the storage config travels in the environment to keep keys off argv.
  std::vector<std::string> argv = {python_, "-m", "determined.exec.checkpoint_tar", "--uuid", uuid};
  std::map<std::string, std::string> env = {{"DET_STORAGE_CONFIG", storage.dump()},
                                            {"AWS_MAX_ATTEMPTS", "2"}};
  if (!harness_dir_.empty()) env["PYTHONPATH"] = harness_dir_;
  DET_ASSIGN_OR_RETURN(ProcessResult proc, RunProcess(argv, env));
  if (proc.exit_code == 2) return NotFound("checkpoint files of " + uuid + " not found");
  if (proc.exit_code == 3) {  // a link or special file, named by the helper (checkpoint_tar.py)
    std::string reason = proc.stdout_text.substr(0, 1000);
    while (!reason.empty() && reason.back() == '\n') reason.pop_back();
    return FailedPrecondition(reason);
  }
  if (proc.exit_code != 0) {
    return Unavailable("could not read checkpoint " + uuid + " from its " +
                       storage.value("type", std::string("?")) + " storage (helper exited " +
                       std::to_string(proc.exit_code) + "; the master's log has the reason)");
  }
  return std::move(proc.stdout_text);
}

Status CheckpointService::CollectExperimentCheckpoints(int64_t experiment_id) {
  DET_ASSIGN_OR_RETURN(store::ExperimentRow exp, store_->GetExperiment(experiment_id));
  DET_ASSIGN_OR_RETURN(checkpoint_gc::GcPolicy policy,
                       checkpoint_gc::PolicyFromExperimentConfig(exp.config));
  DET_ASSIGN_OR_RETURN(std::vector<store::CheckpointRow> ckpts,
                       store_->ListCheckpointsForExperiment(experiment_id));
  if (ckpts.empty()) return Status::Ok();
  DET_ASSIGN_OR_RETURN(std::vector<store::TrialRow> trials, store_->ListTrials(experiment_id));
  std::vector<std::string> all_uuids;
  for (const auto& c : ckpts) all_uuids.push_back(c.uuid);
  // Checkpoints registered in the model registry are never collected.
  DET_ASSIGN_OR_RETURN(std::set<std::string> registered, RegisteredCheckpoints(store_, all_uuids));
  std::set<std::string> warm_starts;
  const config::SearcherMetric metric = config::SearcherMetric::FromConfigJson(exp.config);
  std::map<std::pair<int64_t, int64_t>, double> metric_at;  // (trial, steps) -> searcher metric
  for (const auto& t : trials) {
    if (!t.warm_start_checkpoint_uuid.empty()) warm_starts.insert(t.warm_start_checkpoint_uuid);
    DET_ASSIGN_OR_RETURN(std::vector<store::MetricRow> vals,
                         store_->ListMetrics(t.id, "validation"));
    for (const auto& v : vals) {
      std::optional<double> value = metric.ValueInReport(v.metrics);
      if (value) metric_at[{t.id, v.total_batches}] = *value;
    }
  }
  std::vector<checkpoint_gc::GcCheckpoint> input;
  int64_t order = 0;
  for (const auto& c : ckpts) {
    checkpoint_gc::GcCheckpoint g;
    g.uuid = c.uuid;
    g.trial_id = c.trial_id;
    g.steps_completed = c.steps_completed;
    g.report_time = c.report_time;
    g.state = c.state;
    g.id = ++order;
    g.keep = warm_starts.count(c.uuid) > 0 || registered.count(c.uuid) > 0;
    auto it = metric_at.find({c.trial_id, c.steps_completed});
    if (it != metric_at.end()) g.searcher_metric = it->second;
    input.push_back(std::move(g));
  }
  std::vector<std::string> doomed = checkpoint_gc::SelectCheckpointsToDelete(input, policy);
  if (doomed.empty()) return Status::Ok();
  spdlog::info("checkpoint GC of experiment {}: deleting {} of {} checkpoints", experiment_id,
               doomed.size(), ckpts.size());
  return gc_->Submit(experiment_id, exp.config.value("checkpoint_storage", json::object()), doomed,
                     {});
}

Status CheckpointService::DeleteExperimentFiles(int64_t experiment_id,
                                                const json& experiment_config) {
  DET_ASSIGN_OR_RETURN(std::vector<store::CheckpointRow> ckpts,
                       store_->ListCheckpointsForExperiment(experiment_id));
  std::vector<std::string> uuids;
  for (const auto& c : ckpts) {
    if (c.state != kDeleted) uuids.push_back(c.uuid);
  }
  return gc_->Submit(experiment_id, experiment_config.value("checkpoint_storage", json::object()),
                     uuids, {}, /*delete_experiment=*/true);
}

Status CheckpointService::DeleteTensorboardFiles(int64_t experiment_id,
                                                 const json& experiment_config) {
  return gc_->Submit(experiment_id, experiment_config.value("checkpoint_storage", json::object()),
                     {}, {}, /*delete_experiment=*/false, /*delete_tensorboards=*/true);
}

bool CheckpointService::WaitForCheckpointGc(int64_t timeout_ms) {
  return gc_->WaitIdle(timeout_ms);
}

}  // namespace det::master::server
