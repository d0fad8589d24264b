// Master: the rungs of an adaptive search as its searcher holds them (web UI rung view). A
// running (or, since the master started, finished) experiment's searcher is read in memory; an
// experiment finished before the master started is restored from its stored snapshot and
// journal, as RestoreExperimentLocked does, without publishing it.
#include "master/searcher/rung_view.h"
#include "master/server/master.h"
#include "master/server/master_runtime.h"

namespace det::master::server {

using nlohmann::json;

Result<json> Master::SearcherRungs(int64_t experiment_id) {
  std::optional<config::ExperimentConfig> cfg;
  json snapshot;
  std::map<std::string, int64_t> trial_ids;
  {
    MutexLock lock(&mu_);
    auto it = experiments_.find(experiment_id);
    if (it != experiments_.end() && it->second->searcher) {
      cfg = it->second->config;
      snapshot = it->second->searcher->Snapshot();
      trial_ids = it->second->trial_by_request;
    }
  }
  if (!cfg) {
    DET_ASSIGN_OR_RETURN(store::ExperimentRow row, store_->GetExperiment(experiment_id));
    DET_ASSIGN_OR_RETURN(config::ExperimentConfig parsed,
                         config::ExperimentConfigFromJson(row.config));
    // Experiment reads leave the snapshot out (it is MBs for big searches); read it alone.
    DET_ASSIGN_OR_RETURN(std::string snapshot_text,
                         store_->GetExperimentSnapshotText(experiment_id));
    nlohmann::json stored = nlohmann::json::parse(snapshot_text, nullptr, false);
    if (stored.is_discarded()) stored = nlohmann::json::object();
    DET_ASSIGN_OR_RETURN(SearcherJournalService::Loaded loaded,
                         searcher_journal_->Load(experiment_id, stored));
    // Load remembers the experiment for its next Persist; this read persists nothing.
    searcher_journal_->Forget(experiment_id);
    Result<std::unique_ptr<searcher::Searcher>> search =
        loaded.snapshot.contains("searcher")
            ? searcher::Searcher::Restore(parsed, loaded.snapshot["searcher"])
            : searcher::Searcher::Create(parsed);
    if (!search.ok()) return search.status();
    DET_RETURN_IF_ERROR(searcher::JournaledSearcher::Replay(**search, loaded.events));
    snapshot = (*search)->Snapshot();
    DET_ASSIGN_OR_RETURN(std::vector<store::TrialRow> trials, store_->ListTrials(experiment_id));
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
