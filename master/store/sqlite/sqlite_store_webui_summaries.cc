// The web UI list's per-experiment columns (checkpoints, best validation), read for one page of
// experiments at a time so that the list stays fast however many experiments there are.
#include <map>
#include <string>

#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {

namespace {

std::string Placeholders(size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += i == 0 ? "?" : ", ?";
  return out;
}

}  // namespace

Result<std::vector<ExperimentSummaryRow>> SqliteStore::ListExperimentSummaries(
    const std::vector<int64_t>& experiment_ids) {
  std::vector<ExperimentSummaryRow> out;
  if (experiment_ids.empty()) return out;
  Reader r = Read();
  const Dialect d = r.db()->dialect();
  struct Searcher {
    std::string metric;
    bool smaller_is_better = true;
  };
  std::map<int64_t, Searcher> searchers;
  {
    std::string sql =
        "SELECT id, COALESCE(" + sql::JsonText(d, "config", {"searcher", "metric"}) + ", ''), " +
        sql::JsonTruth(d, "config", {"searcher", "smaller_is_better"}, 1) +
        " FROM experiments WHERE id IN (" + Placeholders(experiment_ids.size()) + ") ORDER BY id";
    DET_PREPARE_ON(s, r.db(), sql.c_str());
    for (size_t i = 0; i < experiment_ids.size(); ++i)
      s.Bind(static_cast<int>(i + 1), experiment_ids[i]);
    while (true) {
      DET_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      searchers[s.Int(0)] = {s.Text(1), s.Int(2) != 0};
      ExperimentSummaryRow r;
      r.experiment_id = s.Int(0);
      out.push_back(r);
    }
  }
  std::map<int64_t, ExperimentSummaryRow*> by_id;
  for (auto& r : out) by_id[r.experiment_id] = &r;
  {
    std::string sql =
        "SELECT t.experiment_id, COUNT(*), COALESCE(SUM(c.size), 0) FROM checkpoints c JOIN "
        "trials t ON c.trial_id = t.id WHERE t.experiment_id IN (" +
        Placeholders(experiment_ids.size()) +
        ") AND c.state IN ('COMPLETED', 'STATE_COMPLETED') GROUP BY t.experiment_id";
    DET_PREPARE_ON(s, r.db(), sql.c_str());
    for (size_t i = 0; i < experiment_ids.size(); ++i)
      s.Bind(static_cast<int>(i + 1), experiment_ids[i]);
    while (true) {
      DET_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      ExperimentSummaryRow* r = by_id[s.Int(0)];
      r->checkpoint_count = s.Int(1);
      r->checkpoint_size = s.Int(2);
    }
  }
  // Best validation: the best trial by the best value kept on each trial row (store13,
  // migration 0021), instead of every validation report of the experiment.
  for (auto& [id, searcher] : searchers) {
    if (searcher.metric.empty()) continue;
    std::string sql = std::string(
                          "SELECT id, best_validation_value FROM trials WHERE experiment_id = ? "
                          "AND best_validation_value IS NOT NULL ORDER BY best_validation_value ") +
                      (searcher.smaller_is_better ? "ASC" : "DESC") + ", id LIMIT 1";
    DET_PREPARE_ON(s, r.db(), sql.c_str());
    s.Bind(1, id);
    DET_ASSIGN_OR_RETURN(bool row, s.Step());
    if (row) {
      by_id[id]->best_trial_id = s.Int(0);
      by_id[id]->best_metric = s.Double(1);
    }
  }
  return out;
}

}  // namespace det::master::store
