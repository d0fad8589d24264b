// ExperimentService: reads of experiments and trials. Rows come from the store (its read
// connections), the presented states of live ones from the RuntimeView; none waits for the loop,
// except the rung view of a live search, which reads its searcher there.
#include <algorithm>

#include "master/config/searcher_metric.h"
#include "master/core/unmanaged_states.h"
#include "master/searcher/rung_view.h"
#include "master/server/experiment_service.h"
#include "master/server/task_service.h"
#include "master/server/unmanaged_service.h"

namespace det::master::server {

using nlohmann::json;

Result<ExperimentView> ExperimentService::GetExperiment(int64_t id) {
  DET_ASSIGN_OR_RETURN(store::ExperimentRow row, deps_.store->GetExperiment(id));
  ExperimentView v;
  // Counted, not read: an experiment may hold 10,000s of trials.
  DET_ASSIGN_OR_RETURN(v.num_trials, deps_.store->CountTrials(id));
  Result<store::UserRow> owner = deps_.store->GetUserById(row.owner_id);
  v.username = owner.ok() ? owner->username : "";
  if (std::optional<UnmanagedService::ExperimentMark> mark = deps_.unmanaged->FindExperiment(id)) {
    v.unmanaged = true;
    v.external_experiment_id = mark->external_id;
    v.presented_state = core::PresentedUnmanagedState(row.state);
    v.row = std::move(row);
    return v;
  }
  v.presented_state = deps_.view->PresentedExperimentState(id).value_or("STATE_" + row.state);
  v.row = std::move(row);
  return v;
}

Result<std::vector<ExperimentView>> ExperimentService::ListExperiments(
    const store::ExperimentFilter& filter, const store::Page& page, int64_t* total) {
  DET_ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                       deps_.store->ListExperimentIds(filter, page, total));
  std::vector<ExperimentView> out;
  for (int64_t id : ids) {
    DET_ASSIGN_OR_RETURN(ExperimentView v, GetExperiment(id));
    out.push_back(std::move(v));
  }
  return out;
}

Result<TrialView> ExperimentService::GetTrial(int64_t trial_id) {
  DET_ASSIGN_OR_RETURN(std::vector<TrialView> views, GetTrials({trial_id}));
  return std::move(views.front());
}

namespace {

// A trial's view from its rows; presented_state is left to the caller. Its best and latest
// validation are kept on the trial row as reports arrive: two rows read, not every report.
TrialView TrialViewOf(store::TrialViewRows rows) {
  TrialView v;
  v.task_ids = std::move(rows.task_ids);
  if (v.task_ids.empty()) v.task_ids.push_back(rows.row.task_id);
  v.summary_metrics = std::move(rows.summary_metrics);
  v.latest_validation = std::move(rows.validations.latest);
  v.best_validation = std::move(rows.validations.best);
  for (auto& c : rows.checkpoints) {
    if (c.state != "COMPLETED") continue;
    ++v.checkpoint_count;
    v.total_checkpoint_size += c.size;
    if (v.best_validation && c.steps_completed == v.best_validation->total_batches) {
      v.best_checkpoint = c;
    }
    if (!v.best_checkpoint && c.steps_completed >= 0) v.best_checkpoint = c;
  }
  v.row = std::move(rows.row);
  return v;
}

}  // namespace

Result<std::vector<TrialView>> ExperimentService::GetTrials(const std::vector<int64_t>& trial_ids) {
  DET_ASSIGN_OR_RETURN(std::vector<store::TrialViewRows> rows,
                       deps_.store->GetTrialViewRows(trial_ids));
  std::vector<TrialView> out;
  out.reserve(rows.size());
  size_t next = 0;
  for (int64_t id : trial_ids) {
    if (next < rows.size() && rows[next].row.id == id) {
      out.push_back(TrialViewOf(std::move(rows[next++])));
      continue;
    }
    // A repeated id (its one entry already used) or a trial that does not exist.
    auto seen =
        std::find_if(out.begin(), out.end(), [id](const TrialView& v) { return v.row.id == id; });
    if (seen == out.end()) return NotFound("trial " + std::to_string(id) + " not found");
    out.push_back(*seen);
  }
  for (TrialView& v : out) {
    v.presented_state = deps_.unmanaged->IsUnmanagedTrial(v.row.id)
                            ? core::PresentedUnmanagedState(v.row.state)
                            : deps_.view->PresentedTrialState(v.row.id, v.row.state);
  }
  return out;
}

Result<std::vector<TrialView>> ExperimentService::ListTrials(int64_t experiment_id) {
  DET_RETURN_IF_ERROR(deps_.store->GetExperiment(experiment_id).status());
  DET_ASSIGN_OR_RETURN(std::vector<store::TrialRow> rows, deps_.store->ListTrials(experiment_id));
  std::vector<int64_t> ids;
  ids.reserve(rows.size());
  for (const auto& r : rows) ids.push_back(r.id);
  return GetTrials(ids);
}

Result<std::string> ExperimentService::GetContextForTask(const std::string& task_id) {
  if (deps_.tasks->Has(task_id)) return deps_.tasks->Context(task_id);  // a command, notebook...
  size_t dot = task_id.find('.');
  int64_t exp_id = std::atoll(task_id.substr(0, dot).c_str());
  if (exp_id <= 0) return NotFound("task " + task_id + " not found");
  return deps_.store->GetModelDefinition(exp_id);
}

Result<std::string> ExperimentService::GetModelDefinition(int64_t experiment_id) {
  return deps_.store->GetModelDefinition(experiment_id);
}

Result<std::optional<double>> ExperimentService::BestValidationMetric(int64_t experiment_id) {
  DET_ASSIGN_OR_RETURN(store::ExperimentRow exp, deps_.store->GetExperiment(experiment_id));
  const config::SearcherMetric metric = config::SearcherMetric::FromConfigJson(exp.config);
  return deps_.store->BestExperimentValidation(experiment_id, metric.smaller_is_better);
}

Result<std::vector<store::MetricRow>> ExperimentService::ListMetrics(int64_t trial_id,
                                                                     const std::string& group) {
  DET_RETURN_IF_ERROR(deps_.store->GetTrial(trial_id).status());
  return deps_.store->ListMetrics(trial_id, group);
}

Result<json> ExperimentService::SearcherRungs(int64_t experiment_id) {
  std::optional<config::ExperimentConfig> cfg;
  json snapshot;
  std::map<std::string, int64_t> trial_ids;
  // A live search's searcher is read on the loop (a copy of its snapshot); a finished one's is
  // restored from the store, as at start-up, without publishing it.
  deps_.loop->Read<bool>([&]() {
    runtime_role.Assume();
    ExperimentRuntime* exp = FindExperiment(experiment_id);
    if (exp != nullptr && exp->core) {
      cfg = exp->config;
      snapshot = exp->core->searcher().Snapshot();
      trial_ids = exp->trial_by_request;
    }
    return true;
  });
  if (!cfg) {
    DET_ASSIGN_OR_RETURN(store::ExperimentRow row, deps_.store->GetExperiment(experiment_id));
    DET_ASSIGN_OR_RETURN(config::ExperimentConfig parsed,
                         config::ExperimentConfigFromJson(row.config));
    // Experiment reads leave the snapshot out (it is MBs for big searches); read it alone.
    DET_ASSIGN_OR_RETURN(std::string snapshot_text,
                         deps_.store->GetExperimentSnapshotText(experiment_id));
    nlohmann::json stored = nlohmann::json::parse(snapshot_text, nullptr, false);
    if (stored.is_discarded()) stored = nlohmann::json::object();
    DET_ASSIGN_OR_RETURN(SearcherJournalService::Loaded loaded,
                         deps_.searcher_journal->Load(experiment_id, stored));
    // Load remembers the experiment for its next Persist; this read persists nothing.
    deps_.searcher_journal->Forget(experiment_id);
    Result<std::unique_ptr<searcher::Searcher>> search =
        loaded.snapshot.contains("searcher")
            ? searcher::Searcher::Restore(parsed, loaded.snapshot["searcher"])
            : searcher::Searcher::Create(parsed);
    if (!search.ok()) return search.status();
    DET_RETURN_IF_ERROR(searcher::JournaledSearcher::Replay(**search, loaded.events));
    snapshot = (*search)->Snapshot();
    DET_ASSIGN_OR_RETURN(std::vector<store::TrialRow> trials,
                         deps_.store->ListTrials(experiment_id));
    for (const store::TrialRow& t : trials) trial_ids[t.request_id] = t.id;
    cfg = std::move(parsed);
  }
  DET_ASSIGN_OR_RETURN(searcher::MethodParams params, searcher::ReadMethodParams(*cfg));
  DET_ASSIGN_OR_RETURN(std::vector<searcher::BracketView> views,
                       searcher::BuildRungViews(params, snapshot));
  json brackets = searcher::RungViewsToJson(views);
  for (json& b : brackets) {
    for (json& r : b["rungs"]) {
      for (json& t : r["trials"]) {
        auto id = trial_ids.find(t["requestId"].get<std::string>());
        t["trialId"] = id == trial_ids.end() ? json(nullptr) : json(id->second);
      }
    }
  }
  return json{{"searcher", params.name},
              {"smallerIsBetter", params.smaller_is_better},
              {"brackets", std::move(brackets)}};
}

}  // namespace det::master::server
