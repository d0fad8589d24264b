// Master: experiment edits (PATCH, continue), trial kill and experiment deletion.
#include <spdlog/spdlog.h>

#include <set>

#include "master/server/master.h"
#include "master/server/master_runtime.h"

namespace det::master::server {

using core::RunState;
using nlohmann::json;

namespace {

// Merges `patch` into `target` key by key (objects recursively), as a config override does.
void MergeInto(json& target, const json& patch) {
  for (auto& [k, v] : patch.items()) {
    if (v.is_object() && target.contains(k) && target[k].is_object()) {
      MergeInto(target[k], v);
    } else {
      target[k] = v;
    }
  }
}

Status CheckInt(const json& v, const std::string& field, int64_t min, int64_t max) {
  if (!v.is_number_integer() || v.get<int64_t>() < min || v.get<int64_t>() > max) {
    return InvalidArgument(field + ": must be an integer between " + std::to_string(min) + " and " +
                           std::to_string(max) + " (got " + v.dump() + ")");
  }
  return Status::Ok();
}

}  // namespace

Status Master::PatchExperiment(int64_t id, const json& patch) {
  // Answers once the searcher state this call changed is stored (after mu_ is released).
  SearcherJournalService::AwaitScope stored(searcher_journal_.get());
  if (!patch.is_object()) return InvalidArgument("body: must be an object");
  MutexLock lock(&mu_);
  DET_ASSIGN_OR_RETURN(store::ExperimentRow row, store_->GetExperiment(id));
  json config = row.config;
  std::string notes = row.notes;
  bool gc_changed = false;
  bool priority_changed = false;
  if (patch.contains("name") && patch["name"].is_string() &&
      !patch["name"].get<std::string>().empty()) {
    config["name"] = patch["name"];
  }
  if (patch.contains("description") && patch["description"].is_string()) {
    config["description"] = patch["description"];
  }
  if (patch.contains("notes") && patch["notes"].is_string()) notes = patch["notes"];
  if (patch.contains("labels") && !patch["labels"].is_null()) {
    if (!patch["labels"].is_array()) return InvalidArgument("labels: must be a list of strings");
    std::set<std::string> seen;
    json labels = json::array();
    for (const auto& l : patch["labels"]) {
      if (!l.is_string()) return InvalidArgument("labels: must be a list of strings");
      if (seen.insert(l.get<std::string>()).second) labels.push_back(l);
    }
    config["labels"] = labels;
  }
  if (patch.contains("resources") && patch["resources"].is_object()) {
    const json& r = patch["resources"];
    static const std::pair<const char*, const char*> kFields[] = {
        {"maxSlots", "max_slots"}, {"weight", "weight"}, {"priority", "priority"}};
    for (const auto& [camel, snake] : kFields) {
      const json* v = r.contains(camel) ? &r[camel] : r.contains(snake) ? &r[snake] : nullptr;
      if (v == nullptr || v->is_null()) continue;
      std::string field = std::string("resources.") + snake;
      if (std::string(snake) == "priority") DET_RETURN_IF_ERROR(CheckInt(*v, field, 1, 99));
      if (std::string(snake) == "max_slots") DET_RETURN_IF_ERROR(CheckInt(*v, field, 0, 1 << 30));
      if (std::string(snake) == "weight" && (!v->is_number() || v->get<double>() <= 0)) {
        return InvalidArgument(field + ": must be a number > 0 (got " + v->dump() + ")");
      }
      if (std::string(snake) == "priority" && config["resources"].value("priority", json()) != *v) {
        priority_changed = true;
      }
      config["resources"][snake] = *v;
    }
    const json* pool = r.contains("resourcePool")    ? &r["resourcePool"]
                       : r.contains("resource_pool") ? &r["resource_pool"]
                                                     : nullptr;
    if (pool != nullptr && !pool->is_null()) {
      if (!pool->is_string()) {
        return InvalidArgument("resources.resource_pool: must be a string (got " + pool->dump() +
                               ")");
      }
      DET_RETURN_IF_ERROR(CheckPoolExists(pool->get<std::string>()));
      config["resources"]["resource_pool"] = *pool;
    }
  }
  if (patch.contains("checkpointStorage") || patch.contains("checkpoint_storage")) {
    const json& c = patch.contains("checkpointStorage") ? patch["checkpointStorage"]
                                                        : patch["checkpoint_storage"];
    static const std::pair<const char*, const char*> kSave[] = {
        {"saveExperimentBest", "save_experiment_best"},
        {"saveTrialBest", "save_trial_best"},
        {"saveTrialLatest", "save_trial_latest"}};
    for (const auto& [camel, snake] : kSave) {
      const json* v = c.contains(camel) ? &c[camel] : c.contains(snake) ? &c[snake] : nullptr;
      if (v == nullptr || v->is_null()) continue;
      DET_RETURN_IF_ERROR(CheckInt(*v, std::string("checkpoint_storage.") + snake, 0, 1 << 30));
      config["checkpoint_storage"][snake] = *v;
      gc_changed = true;
    }
  }
  DET_RETURN_IF_ERROR(store_->UpdateExperimentMeta(id, config, row.archived, notes));
  auto it = experiments_.find(id);
  if (it != experiments_.end()) {
    it->second->config.defaulted = config;
    Result<config::ExperimentConfig> typed = config::ExperimentConfigFromJson(config);
    if (typed.ok()) {
      it->second->config = std::move(typed).value();
    }
    // A new priority puts the job back at its submission-time position (Determined's rule).
    if (priority_changed && it->second->queue_position) {
      it->second->queue_position.reset();
      DET_RETURN_IF_ERROR(PersistSnapshotLocked(*it->second));
    }
    ScheduleLocked();
  }
  auto state = core::ParseRunState(row.state);
  if (gc_changed && state && core::IsTerminal(*state)) {
    return checkpoints_->CollectExperimentCheckpoints(id);
  }
  return Status::Ok();
}

Status Master::ContinueExperiment(int64_t id, const std::string& override_yaml) {
  // Answers once the searcher state this call changed is stored (after mu_ is released).
  SearcherJournalService::AwaitScope stored(searcher_journal_.get());
  json overrides = json::object();
  if (!override_yaml.empty()) {
    DET_ASSIGN_OR_RETURN(overrides, config::YamlToJson(override_yaml));
    if (overrides.is_null()) overrides = json::object();
    if (!overrides.is_object()) return InvalidArgument("overrideConfig: must be a mapping");
  }
  MutexLock lock(&mu_);
  DET_ASSIGN_OR_RETURN(store::ExperimentRow row, store_->GetExperiment(id));
  auto state = core::ParseRunState(row.state);
  if (!state || !(*state == RunState::kCompleted || *state == RunState::kCanceled ||
                  *state == RunState::kError)) {
    return FailedPrecondition("experiment " + std::to_string(id) +
                              " must be COMPLETED, CANCELED or ERROR to continue (it is " +
                              row.state + ")");
  }
  MergeInto(row.config, overrides);
  DET_ASSIGN_OR_RETURN(config::ExperimentConfig cfg, config::ExperimentConfigFromJson(row.config));
  DET_RETURN_IF_ERROR(store_->UpdateExperimentMeta(id, row.config, false, row.notes));
  if (!experiments_.count(id)) {
    DET_RETURN_IF_ERROR(RestoreExperimentLocked(row, {}));
  }
  ExperimentRuntime& exp = *experiments_[id];
  exp.config = cfg;
  exp.continued = true;
  DET_RETURN_IF_ERROR(store_->UpdateExperimentState(
      id, std::string(core::RunStateName(RunState::kActive)), std::nullopt));
  exp.state = RunState::kActive;
  // Every trial that did not complete runs again from its latest checkpoint, restarts reset.
  for (auto& [rid, tid] : exp.trial_by_request) {
    TrialRuntime& t = *trials_[tid];
    if (t.state == RunState::kCompleted) continue;
    DET_ASSIGN_OR_RETURN(store::TrialRow tr, store_->GetTrial(tid));
    tr.state = std::string(core::RunStateName(RunState::kActive));
    tr.end_time.reset();
    tr.restarts = 0;
    DET_RETURN_IF_ERROR(store_->UpdateTrial(tr));
    t.state = RunState::kActive;
    t.restarts = 0;
    t.MutableSearcher().closed = false;
    NotifyTrialLocked(t.id);
    DET_RETURN_IF_ERROR(RequestAllocationLocked(t));
  }
  return MaybeFinishExperimentLocked(exp);
}

Status Master::KillTrial(int64_t trial_id) {
  // Answers once the searcher state this call changed is stored (after mu_ is released).
  SearcherJournalService::AwaitScope stored(searcher_journal_.get());
  MutexLock lock(&mu_);
  auto it = trials_.find(trial_id);
  if (it == trials_.end()) {
    DET_RETURN_IF_ERROR(store_->GetTrial(trial_id).status());
    return Status::Ok();  // already terminal
  }
  TrialRuntime& t = *it->second;
  if (core::IsTerminal(t.state)) return Status::Ok();
  ExperimentRuntime& exp = *experiments_[t.experiment_id];
  if (!t.allocation_id.empty()) {
    DET_RETURN_IF_ERROR(SetTrialStateLocked(t, RunState::kStoppingKilled));
    TerminateAllocationLocked(*allocations_[t.allocation_id], false);
    return Status::Ok();
  }
  DET_RETURN_IF_ERROR(SetTrialStateLocked(t, RunState::kCanceled));
  std::vector<searcher::Action> actions;
  if (!t.searcher().searcher_exited) {
    t.MutableSearcher().searcher_exited = true;
    actions = exp.searcher->TrialExitedEarly(t.request_id, searcher::ExitedReason::kUserCanceled);
    for (auto& a : exp.searcher->TrialExited(t.request_id)) actions.push_back(std::move(a));
  }
  return ProcessActionsLocked(exp, std::move(actions));
}

Status Master::DeleteExperiment(int64_t id) {
  MutexLock lock(&mu_);
  DET_ASSIGN_OR_RETURN(store::ExperimentRow row, store_->GetExperiment(id));
  auto state = core::ParseRunState(row.state);
  if (state == RunState::kDeleting) return Status::Ok();
  if (!state || !(*state == RunState::kCompleted || *state == RunState::kCanceled ||
                  *state == RunState::kError || *state == RunState::kDeleteFailed)) {
    return FailedPrecondition("experiment " + std::to_string(id) +
                              " must be COMPLETED, CANCELED or ERROR to be deleted (it is " +
                              row.state + ")");
  }
  DET_ASSIGN_OR_RETURN(std::vector<store::CheckpointRow> ckpts,
                       store_->ListCheckpointsForExperiment(id));
  std::vector<std::string> uuids;
  for (const auto& c : ckpts) {
    if (c.state != "DELETED") uuids.push_back(c.uuid);
  }
  DET_ASSIGN_OR_RETURN(std::set<std::string> registered,
                       RegisteredCheckpoints(store_.get(), uuids));
  if (!registered.empty()) {
    std::string which = *registered.begin() + (registered.size() > 1 ? " and others are" : " is");
    return InvalidArgument("experiment " + std::to_string(id) + " cannot be deleted: checkpoint " +
                           which + " registered as a model version (delete those versions first)");
  }
  DET_RETURN_IF_ERROR(store_->UpdateExperimentState(
      id, std::string(core::RunStateName(RunState::kDeleting)), row.end_time));
  auto it = experiments_.find(id);
  if (it != experiments_.end()) {
    for (const auto& [rid, tid] : it->second->trial_by_request) {
      trials_.erase(tid);
      NotifyTrialLocked(tid);
    }
    experiments_.erase(it);
  }
  searcher_journal_->Forget(id);
  return checkpoints_->DeleteExperimentFiles(id, row.config);
}

}  // namespace det::master::server
