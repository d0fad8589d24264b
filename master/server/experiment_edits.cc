// ExperimentService: experiment edits (PATCH, archive, continue, job updates), trial kill and
// experiment deletion.
#include <spdlog/spdlog.h>

#include <set>

#include "master/config/storage_roots.h"
#include "master/server/checkpoint_service.h"
#include "master/server/experiment_service.h"
#include "master/server/model_service.h"
#include "master/server/workspace_service.h"

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

void ExperimentService::PatchExperiment(int64_t id, json patch, Done<Status> done) {
  if (!patch.is_object()) return done(InvalidArgument("body: must be an object"));
  Run([this, id, patch = std::move(patch)]() ON_RUNTIME { return PatchExperimentNow(id, patch); },
      std::move(done));
}

Status ExperimentService::PatchExperimentNow(int64_t id, const json& patch) {
  ExperimentRuntime* live = FindExperiment(id);
  // A live experiment's config is in its runtime; a finished one's is read (on the loop, so no
  // other change of it interleaves).
  std::optional<RunState> state;
  json config;
  if (live != nullptr) {
    config = live->config.defaulted;
    state = live->state();
  } else {
    DET_ASSIGN_OR_RETURN(store::ExperimentRow row, deps_.store->GetExperiment(id));
    config = row.config;
    state = core::ParseRunState(row.state);
  }
  std::optional<std::string> new_notes;
  bool gc_changed = false;
  bool priority_changed = false;
  if (patch.contains("name") && patch["name"].is_string() &&
      !patch["name"].get<std::string>().empty()) {
    config["name"] = patch["name"];
  }
  if (patch.contains("description") && patch["description"].is_string()) {
    config["description"] = patch["description"];
  }
  if (patch.contains("notes") && patch["notes"].is_string()) {
    new_notes = patch["notes"].get<std::string>();
  }
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
      DET_RETURN_IF_ERROR(deps_.allocations->CheckPoolExists(pool->get<std::string>()));
      if (deps_.workspaces != nullptr) {
        DET_RETURN_IF_ERROR(deps_.workspaces
                                ->ResolvePoolForExperiment(
                                    id, pool->get<std::string>(),
                                    config["resources"].value("slots_per_trial", int64_t{1}))
                                .status());
      }
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
  store::DecisionWrites w;
  w.experiment_meta = store::ExperimentMetaWrite{id, config, new_notes, std::nullopt};
  DET_RETURN_IF_ERROR(deps_.store->ApplyDecision(w).status());
  if (live != nullptr) {
    live->config.defaulted = config;
    Result<config::ExperimentConfig> typed = config::ExperimentConfigFromJson(config);
    if (typed.ok()) live->config = std::move(typed).value();
    // A new priority puts the job back at its submission-time position (Determined's rule).
    if (priority_changed && live->queue_position) {
      live->queue_position.reset();
      DET_RETURN_IF_ERROR(PersistSnapshot(*live));
    }
    PublishJob(*live);
    deps_.allocations->RequestPass();
  }
  if (gc_changed && state && core::IsTerminal(*state)) {
    return deps_.checkpoints->CollectExperimentCheckpoints(id);
  }
  return Status::Ok();
}

Status ExperimentService::UpdateJobOf(int64_t experiment_id, const json& resources,
                                      bool position_set,
                                      std::optional<scheduler::QueuePosition> position) {
  if (!resources.empty()) {
    DET_RETURN_IF_ERROR(PatchExperimentNow(experiment_id, {{"resources", resources}}));
  }
  ExperimentRuntime* exp = FindExperiment(experiment_id);
  if (exp == nullptr) return Status::Ok();
  if (position_set) exp->queue_position = position;
  DET_RETURN_IF_ERROR(PersistSnapshot(*exp));
  PublishJob(*exp);
  return Status::Ok();
}

void ExperimentService::SetArchived(int64_t id, bool archived, Done<Status> done) {
  Run(
      [this, id, archived]() ON_RUNTIME -> Status {
        std::optional<RunState> state;
        if (ExperimentRuntime* live = FindExperiment(id)) {
          state = live->state();
        } else {
          DET_ASSIGN_OR_RETURN(store::ExperimentRow row, deps_.store->GetExperiment(id));
          state = core::ParseRunState(row.state);
        }
        if (archived && state && !core::IsTerminal(*state)) {
          return FailedPrecondition("experiment " + std::to_string(id) +
                                    " must be in a terminal state to be archived (it is " +
                                    std::string(core::RunStateName(*state)) + ")");
        }
        store::DecisionWrites w;
        w.experiment_meta = store::ExperimentMetaWrite{id, std::nullopt, std::nullopt, archived};
        return deps_.store->ApplyDecision(w).status();
      },
      std::move(done));
}

void ExperimentService::ContinueExperiment(int64_t id, std::string override_yaml,
                                           Done<Status> done) {
  json overrides = json::object();
  if (!override_yaml.empty()) {
    Result<json> parsed = config::YamlToJson(override_yaml);
    if (!parsed.ok()) return done(parsed.status());
    overrides = std::move(parsed).value();
    if (overrides.is_null()) overrides = json::object();
    if (!overrides.is_object()) return done(InvalidArgument("overrideConfig: must be a mapping"));
  }
  Run([this, id, overrides = std::move(overrides)]()
          ON_RUNTIME { return ContinueExperimentNow(id, overrides); },
      std::move(done));
}

Status ExperimentService::ContinueExperimentNow(int64_t id, const json& overrides) {
  DET_ASSIGN_OR_RETURN(store::ExperimentRow row, deps_.store->GetExperiment(id));
  auto state = core::ParseRunState(row.state);
  if (!state || !(*state == RunState::kCompleted || *state == RunState::kCanceled ||
                  *state == RunState::kError)) {
    return FailedPrecondition("experiment " + std::to_string(id) +
                              " must be COMPLETED, CANCELED or ERROR to continue (it is " +
                              row.state + ")");
  }
  MergeInto(row.config, overrides);
  // Overrides may name a storage path too.
  DET_RETURN_IF_ERROR(
      config::CheckConfigStorageRoots(row.config, deps_.config->checkpoint_storage_allowed_roots));
  DET_ASSIGN_OR_RETURN(config::ExperimentConfig cfg, config::ExperimentConfigFromJson(row.config));
  if (FindExperiment(id) == nullptr) {
    DET_RETURN_IF_ERROR(RestoreExperiment(row, {}));
  }
  ExperimentRuntime& exp = *experiments_.at(id);
  // The config, the experiment's state and every trial that did not complete, in one
  // transaction: those trials run again from their latest checkpoints, restarts reset.
  store::DecisionWrites w;
  w.experiment_meta = store::ExperimentMetaWrite{id, row.config, std::nullopt, false};
  config::ExperimentConfig old = exp.config;
  exp.config = cfg;
  Status st = Decide(exp, core::Continue{RulesOf(cfg, /*continued=*/true)}, std::move(w));
  if (!st.ok()) exp.config = std::move(old);  // nothing was stored
  return st;
}

void ExperimentService::KillTrial(int64_t trial_id, Done<Status> done) {
  Run([this, trial_id]() ON_RUNTIME { return KillTrialNow(trial_id); }, std::move(done));
}

Status ExperimentService::KillTrialNow(int64_t trial_id) {
  TrialRuntime* found = FindTrial(trial_id);
  if (found == nullptr) {
    DET_RETURN_IF_ERROR(deps_.store->GetTrial(trial_id).status());
    return Status::Ok();  // already terminal
  }
  ExperimentRuntime& exp = *experiments_.at(found->experiment_id);
  return Decide(exp, core::KillTrial{found->request_id});
}

void ExperimentService::DeleteExperiment(int64_t id, Done<Status> done) {
  Run([this, id]() ON_RUNTIME { return DeleteExperimentNow(id); }, std::move(done));
}

Status ExperimentService::DeleteExperimentNow(int64_t id) {
  DET_ASSIGN_OR_RETURN(store::ExperimentRow row, deps_.store->GetExperiment(id));
  auto state = core::ParseRunState(row.state);
  if (state == RunState::kDeleting) return Status::Ok();
  if (!state || !(*state == RunState::kCompleted || *state == RunState::kCanceled ||
                  *state == RunState::kError || *state == RunState::kDeleteFailed)) {
    return FailedPrecondition("experiment " + std::to_string(id) +
                              " must be COMPLETED, CANCELED or ERROR to be deleted (it is " +
                              row.state + ")");
  }
  DET_ASSIGN_OR_RETURN(std::vector<store::CheckpointRow> ckpts,
                       deps_.store->ListCheckpointsForExperiment(id));
  std::vector<std::string> uuids;
  for (const auto& c : ckpts) {
    if (c.state != "DELETED") uuids.push_back(c.uuid);
  }
  DET_ASSIGN_OR_RETURN(std::set<std::string> registered, RegisteredCheckpoints(deps_.store, uuids));
  if (!registered.empty()) {
    std::string which = *registered.begin() + (registered.size() > 1 ? " and others are" : " is");
    return InvalidArgument("experiment " + std::to_string(id) + " cannot be deleted: checkpoint " +
                           which + " registered as a model version (delete those versions first)");
  }
  store::DecisionWrites w;
  w.experiment_state = store::ExperimentStateWrite{
      id, std::string(core::RunStateName(RunState::kDeleting)), row.end_time};
  DET_RETURN_IF_ERROR(deps_.store->ApplyDecision(w).status());
  if (ExperimentRuntime* exp = FindExperiment(id)) {
    for (const auto& [rid, tid] : exp->trial_by_request) {
      trials_.erase(tid);
      deps_.view->RemoveTrial(tid);
      NotifyTrial(tid);
    }
    deps_.allocations->RemoveJob(exp->job_id);
    experiments_.erase(id);
    deps_.view->RemoveExperiment(id);
  }
  deps_.searcher_journal->Forget(id);
  return deps_.checkpoints->DeleteExperimentFiles(id, row.config);
}

}  // namespace det::master::server
