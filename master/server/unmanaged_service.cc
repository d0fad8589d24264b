#include "master/server/unmanaged_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "master/config/experiment_config.h"
#include "master/config/storage_roots.h"
#include "master/core/states.h"
#include "master/core/unmanaged_states.h"
#include "master/server/passwords.h"

namespace det::master::server {

using core::RunState;
using nlohmann::json;

namespace {

// The parser requires an entrypoint, which an unmanaged experiment has no use for: validate
// with this one, then store the config without it.
constexpr const char* kPlaceholderEntrypoint = "unmanaged";

std::string Name(RunState s) { return std::string(core::RunStateName(s)); }

}  // namespace

UnmanagedService::UnmanagedService(store::Store* store, const Clock* clock,
                                   const MasterConfig* config, Options options)
    : store_(store), clock_(clock), config_(config), options_(options) {
  if (options_.check_interval_ms > 0) checker_ = std::thread([this] { CheckerLoop(); });
}

UnmanagedService::~UnmanagedService() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (checker_.joinable()) checker_.join();
}

void UnmanagedService::CheckerLoop() {
  std::unique_lock<std::mutex> lock(stop_mu_);
  while (!stopping_) {
    stop_cv_.wait_for(lock, std::chrono::milliseconds(options_.check_interval_ms));
    if (stopping_) break;
    lock.unlock();
    Result<std::vector<int64_t>> lost = CheckLostTrials();
    if (!lost.ok()) spdlog::error("checking unmanaged trials: {}", lost.status().ToString());
    lock.lock();
  }
}

Status UnmanagedService::LoadLocked() {
  if (loaded_) return Status::Ok();
  DET_ASSIGN_OR_RETURN(std::vector<store::UnmanagedExperimentRow> exps,
                       store_->ListUnmanagedExperiments());
  DET_ASSIGN_OR_RETURN(std::vector<store::UnmanagedTrialRow> trials, store_->ListUnmanagedTrials());
  for (const auto& e : exps) experiments_[e.experiment_id] = ExperimentMark{e.external_id};
  for (const auto& t : trials) {
    trials_[t.trial_id] = TrialMark{t.experiment_id, t.task_id};
    trial_by_task_[t.task_id] = t.trial_id;
  }
  loaded_ = true;
  return Status::Ok();
}

Result<UnmanagedService::CreatedExperiment> UnmanagedService::CreateExperiment(
    const CreateExperimentRequest& req, int64_t owner_id) {
  if (req.external_id && req.external_id->empty()) {
    return InvalidArgument("externalExperimentId: must not be empty");
  }
  DET_ASSIGN_OR_RETURN(json raw, config::YamlToJson(req.config_yaml));
  if (raw.is_null()) raw = json::object();
  if (!raw.is_object()) return InvalidArgument("config: must be a mapping");
  bool has_entrypoint = raw.contains("entrypoint") && !raw["entrypoint"].is_null();
  if (!has_entrypoint) raw["entrypoint"] = kPlaceholderEntrypoint;
  config::ConfigDefaults defaults;
  defaults.checkpoint_storage = config_->checkpoint_storage;
  defaults.experiment_seed = static_cast<uint32_t>((clock_->NowMicros() / 1000000) & 0x7fffffff);
  defaults.preemption_timeout = config_->preemption_timeout_seconds;
  defaults.task_container_defaults = config_->task_container_defaults;
  // JSON is YAML: the parser reads the config with the placeholder in place.
  DET_ASSIGN_OR_RETURN(config::ExperimentConfig cfg,
                       config::ParseExperimentConfig(raw.dump(), defaults));
  DET_RETURN_IF_ERROR(config::CheckConfigStorageRoots(cfg.defaulted,
                                                      config_->checkpoint_storage_allowed_roots));
  CreatedExperiment out;
  out.config = cfg.defaulted;
  if (!has_entrypoint) out.config["entrypoint"] = nullptr;
  if (req.validate_only) return out;

  store::ExperimentRow row;
  row.state = Name(RunState::kPaused);
  row.config = out.config;
  row.original_config = req.config_yaml;
  row.owner_id = owner_id;
  row.job_id = NewToken().substr(0, 32);
  row.start_time = clock_->NowMicros();
  row.snapshot = json::object();
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(LoadLocked());
  // An existing experiment with the external id is replaced only for its owner, admins
  // included: one user's script never rewrites another's experiment.
  if (req.external_id) {
    for (const auto& [existing, mark] : experiments_) {
      if (mark.external_id != req.external_id) continue;
      Result<store::ExperimentRow> old = store_->GetExperiment(existing);
      // A mark of an experiment deleted since: the store holds nothing to replace.
      if (!old.ok() && old.status().code() == StatusCode::kNotFound) continue;
      DET_RETURN_IF_ERROR(old.status());
      if (old->owner_id != owner_id) {
        return PermissionDenied("externalExperimentId '" + *req.external_id + "': experiment " +
                                std::to_string(existing) +
                                " has it and belongs to another user; only its owner may "
                                "replace it");
      }
    }
  }
  bool created = false;
  DET_ASSIGN_OR_RETURN(int64_t id, store_->UpsertUnmanagedExperiment(row, /*model_definition=*/"",
                                                                     req.external_id, &created));
  experiments_[id] = ExperimentMark{req.external_id};
  if (created) spdlog::info("created unmanaged experiment {}", id);
  out.id = id;
  out.created = created;
  return out;
}

Result<int64_t> UnmanagedService::CreateTrial(const CreateTrialRequest& req) {
  if (req.external_id && req.external_id->empty()) {
    return InvalidArgument("externalTrialId: must not be empty");
  }
  if (!req.hparams.is_null() && !req.hparams.is_object()) {
    return InvalidArgument("hparams: must be an object");
  }
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(LoadLocked());
  DET_RETURN_IF_ERROR(store_->GetExperiment(req.experiment_id).status());
  if (!experiments_.count(req.experiment_id)) {
    return FailedPrecondition("experiment " + std::to_string(req.experiment_id) +
                              " is not unmanaged: trials can only be created on unmanaged "
                              "experiments");
  }
  // Determined's task id is "<experiment>.<suffix>"; an external id makes it stable across runs.
  std::string suffix = req.external_id ? *req.external_id : NewToken().substr(0, 32);
  int64_t now = clock_->NowMicros();
  store::TrialRow row;
  row.experiment_id = req.experiment_id;
  row.request_id = suffix;
  row.hparams = req.hparams.is_null() ? json::object() : req.hparams;
  row.state = Name(RunState::kPaused);
  row.start_time = now;
  row.task_id = std::to_string(req.experiment_id) + "." + suffix;
  store::UnmanagedTrialRow mark;
  mark.experiment_id = req.experiment_id;
  mark.task_id = row.task_id;
  mark.external_id = req.external_id;
  mark.last_activity = now;
  bool created = false;
  DET_ASSIGN_OR_RETURN(int64_t id, store_->UpsertUnmanagedTrial(row, mark, &created));
  if (created) {
    trials_[id] = TrialMark{req.experiment_id, row.task_id};
    trial_by_task_[row.task_id] = id;
    DET_RETURN_IF_ERROR(UpdateExperimentStateLocked(req.experiment_id));
  }
  return id;
}

Result<store::TrialRow> UnmanagedService::UnmanagedTrialLocked(int64_t trial_id) {
  DET_RETURN_IF_ERROR(LoadLocked());
  DET_ASSIGN_OR_RETURN(store::TrialRow row, store_->GetTrial(trial_id));
  if (!trials_.count(trial_id)) {
    return FailedPrecondition("trial " + std::to_string(trial_id) +
                              " is not unmanaged: only unmanaged trials are supported");
  }
  return row;
}

Result<UnmanagedService::StartedTrial> UnmanagedService::StartTrial(int64_t trial_id, bool resume) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(store::TrialRow row, UnmanagedTrialLocked(trial_id));
  if (!resume && row.run_id != 0) {
    return FailedPrecondition("trial " + std::to_string(trial_id) +
                              " has already been started (start it with resume: true)");
  }
  int64_t now = clock_->NowMicros();
  row.run_id += 1;
  row.state = Name(RunState::kActive);
  row.end_time.reset();
  DET_RETURN_IF_ERROR(store_->UpdateTrial(row));
  DET_RETURN_IF_ERROR(store_->TouchUnmanagedTrial(trial_id, now));
  DET_RETURN_IF_ERROR(UpdateExperimentStateLocked(row.experiment_id));
  StartedTrial out;
  out.trial_run_id = row.run_id;
  if (row.run_id > 1) {
    DET_ASSIGN_OR_RETURN(std::vector<store::CheckpointRow> ckpts,
                         store_->ListCheckpointsForTrial(trial_id));
    const store::CheckpointRow* latest = nullptr;
    for (const auto& c : ckpts) {
      if (c.state == "COMPLETED" && (!latest || c.steps_completed >= latest->steps_completed)) {
        latest = &c;
      }
    }
    if (latest) {
      out.latest_checkpoint = latest->uuid;
      out.steps_completed = latest->steps_completed;
    }
  }
  return out;
}

Status UnmanagedService::PatchTrial(int64_t trial_id, const std::optional<std::string>& state) {
  std::optional<RunState> target;
  if (state) {
    DET_ASSIGN_OR_RETURN(RunState s, core::ParseUnmanagedTrialState(*state));
    target = s;
  }
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(store::TrialRow row, UnmanagedTrialLocked(trial_id));
  int64_t now = clock_->NowMicros();
  DET_RETURN_IF_ERROR(store_->TouchUnmanagedTrial(trial_id, now));
  if (!target || Name(*target) == row.state) return Status::Ok();
  row.state = Name(*target);
  if (core::IsTerminal(*target)) {
    row.end_time = now;
  } else {
    row.end_time.reset();
  }
  DET_RETURN_IF_ERROR(store_->UpdateTrial(row));
  spdlog::info("unmanaged trial {} is {}", trial_id, row.state);
  return UpdateExperimentStateLocked(row.experiment_id);
}

Status UnmanagedService::ReportMetrics(int64_t trial_id, int64_t run_id, int64_t steps_completed,
                                       const std::string& group, const json& metrics) {
  if (group.empty() || group.find('.') != std::string::npos) {
    return InvalidArgument("group: must be non-empty and contain no '.' (got '" + group + "')");
  }
  if (steps_completed < 0) return InvalidArgument("stepsCompleted: must be >= 0");
  {
    std::lock_guard<std::mutex> lock(mu_);
    DET_ASSIGN_OR_RETURN(store::TrialRow row, UnmanagedTrialLocked(trial_id));
    if (run_id != row.run_id) {
      return InvalidArgument("invalid run id " + std::to_string(run_id) + " for trial " +
                             std::to_string(trial_id) + " (current run is " +
                             std::to_string(row.run_id) + ")");
    }
  }
  store::MetricRow m;
  m.trial_id = trial_id;
  m.trial_run_id = run_id;
  m.total_batches = steps_completed;
  m.group = group;
  m.metrics = metrics;
  m.report_time = clock_->NowMicros();
  return store_->AddMetrics(m);
}

Status UnmanagedService::ReportProgress(int64_t trial_id, double progress) {
  if (!std::isfinite(progress) || progress < 0) {
    return InvalidArgument("progress: must be a number >= 0");
  }
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(store::TrialRow row, UnmanagedTrialLocked(trial_id));
  return store_->UpdateExperimentProgress(row.experiment_id, std::min(progress, 1.0));
}

Result<std::vector<int64_t>> UnmanagedService::CheckLostTrials() {
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(LoadLocked());
  int64_t now = clock_->NowMicros();
  DET_ASSIGN_OR_RETURN(std::vector<store::UnmanagedTrialRow> silent,
                       store_->ListSilentUnmanagedTrials(now - options_.lost_after_micros));
  std::vector<int64_t> lost;
  for (const auto& mark : silent) {
    DET_ASSIGN_OR_RETURN(store::TrialRow row, store_->GetTrial(mark.trial_id));
    row.state = Name(RunState::kError);
    row.end_time = mark.last_activity;
    DET_RETURN_IF_ERROR(store_->UpdateTrial(row));
    store::TaskLogRow log;
    log.task_id = mark.task_id;
    log.trial_id = mark.trial_id;
    log.timestamp = now;
    log.level = "LOG_LEVEL_ERROR";
    log.stdtype = "stdout";
    log.source = "master";
    log.log = "Trial " + std::to_string(mark.trial_id) +
              " is lost: its script sent no heartbeat "
              "since " +
              FormatRfc3339(mark.last_activity) + "; marking it ERROR\n";
    Status st = store_->AddTaskLogs({log});
    if (!st.ok()) spdlog::warn("cannot log the loss of trial {}: {}", mark.trial_id, st.ToString());
    spdlog::warn("unmanaged trial {} lost (no heartbeat since {})", mark.trial_id,
                 FormatRfc3339(mark.last_activity));
    DET_RETURN_IF_ERROR(UpdateExperimentStateLocked(mark.experiment_id));
    lost.push_back(mark.trial_id);
  }
  return lost;
}

Status UnmanagedService::UpdateExperimentStateLocked(int64_t experiment_id) {
  DET_ASSIGN_OR_RETURN(store::ExperimentRow exp, store_->GetExperiment(experiment_id));
  DET_ASSIGN_OR_RETURN(std::vector<store::TrialRow> trials, store_->ListTrials(experiment_id));
  std::vector<RunState> states;
  std::optional<int64_t> last_end;
  for (const auto& t : trials) {
    states.push_back(core::ParseRunState(t.state).value_or(RunState::kError));
    if (t.end_time && (!last_end || *t.end_time > *last_end)) last_end = t.end_time;
  }
  std::optional<RunState> next = core::UnmanagedExperimentState(states);
  if (!next || Name(*next) == exp.state) return Status::Ok();
  std::optional<int64_t> end_time;
  if (core::IsTerminal(*next)) end_time = last_end.value_or(clock_->NowMicros());
  DET_RETURN_IF_ERROR(store_->UpdateExperimentState(experiment_id, Name(*next), end_time));
  if (*next == RunState::kCompleted) {
    DET_RETURN_IF_ERROR(store_->UpdateExperimentProgress(experiment_id, 1.0));
  }
  spdlog::info("unmanaged experiment {} {} -> {}", experiment_id, exp.state, Name(*next));
  return Status::Ok();
}

std::optional<UnmanagedService::ExperimentMark> UnmanagedService::FindExperiment(
    int64_t experiment_id) {
  std::lock_guard<std::mutex> lock(mu_);
  Status st = LoadLocked();
  if (!st.ok()) {
    spdlog::error("loading unmanaged experiments: {}", st.ToString());
    return std::nullopt;
  }
  auto it = experiments_.find(experiment_id);
  if (it == experiments_.end()) return std::nullopt;
  return it->second;
}

bool UnmanagedService::IsUnmanagedTrial(int64_t trial_id) {
  std::lock_guard<std::mutex> lock(mu_);
  Status st = LoadLocked();
  if (!st.ok()) {
    spdlog::error("loading unmanaged trials: {}", st.ToString());
    return false;
  }
  return trials_.count(trial_id) > 0;
}

std::optional<int64_t> UnmanagedService::TrialOfTask(const std::string& task_id) {
  std::lock_guard<std::mutex> lock(mu_);
  Status st = LoadLocked();
  if (!st.ok()) {
    spdlog::error("loading unmanaged trials: {}", st.ToString());
    return std::nullopt;
  }
  auto it = trial_by_task_.find(task_id);
  if (it == trial_by_task_.end()) return std::nullopt;
  return it->second;
}

}  // namespace det::master::server
