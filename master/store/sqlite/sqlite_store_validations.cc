// SqliteStore: each trial's best and latest validation report on its row (migration 0021), kept
// in the transaction that writes the reports, so that reading a trial (or a page of 100) reads
// two metric rows by id instead of every validation report the trial made.
#include <nlohmann/json.hpp>

#include "master/store/sqlite/metric_rows.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {
namespace {

using nlohmann::json;

// The experiment's searcher metric, from its config's "searcher" section alone (the config
// holds far more than that).
Result<config::SearcherMetric> SearcherMetricOfTrial(Db* db, int64_t trial_id) {
  Statement s(db, "SELECT " + sql::JsonText(db->dialect(), "e.config", {"searcher"}) +
                      " FROM trials t JOIN experiments e ON e.id = t.experiment_id WHERE t.id = ?");
  DET_RETURN_IF_ERROR(s.prepared());
  s.Bind(1, trial_id);
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return NotFound("trial " + std::to_string(trial_id) + " not found");
  json searcher = json::parse(s.Text(0), nullptr, /*allow_exceptions=*/false);
  return config::SearcherMetric::FromConfigJson(json{{"searcher", searcher}});
}

std::optional<double> ValueOf(const config::SearcherMetric& metric, const std::string& text) {
  json report = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return metric.ValueInReport(report);
}

// The columns from every unarchived validation row of the trial.
Result<TrialValidations> ComputeFromRows(Db* db, int64_t trial_id,
                                         const config::SearcherMetric& metric) {
  Statement s(db,
              "SELECT id, total_batches, metrics FROM metrics WHERE trial_id = ? AND "
              "metric_group = 'validation' AND archived = 0");
  DET_RETURN_IF_ERROR(s.prepared());
  s.Bind(1, trial_id);
  TrialValidations out;
  while (true) {
    DET_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.Fold(ValidationPoint{s.Int(0), s.Int(1), ValueOf(metric, s.Text(2))}, metric);
  }
  return out;
}

Status WriteColumns(Db* db, int64_t trial_id, const TrialValidations& v) {
  Statement s(db,
              "UPDATE trials SET best_validation_id = ?, best_validation_value = ?, "
              "latest_validation_id = ? WHERE id = ?");
  DET_RETURN_IF_ERROR(s.prepared());
  if (v.best) {
    s.Bind(1, v.best->id).Bind(2, *v.best->value);
  }
  if (v.latest) s.Bind(3, v.latest->id);
  return s.Bind(4, trial_id).Run();
}

Status RecomputeOn(Db* db, int64_t trial_id) {
  DET_ASSIGN_OR_RETURN(config::SearcherMetric metric, SearcherMetricOfTrial(db, trial_id));
  DET_ASSIGN_OR_RETURN(TrialValidations v, ComputeFromRows(db, trial_id, metric));
  return WriteColumns(db, trial_id, v);
}

}  // namespace

Status SqliteStore::FoldTrialValidationLocked(const MetricRow& row, bool incremental,
                                              ValidationCache* cache) {
  if (row.group != "validation") return Status::Ok();
  auto it = cache->find(row.trial_id);
  if (it == cache->end()) {
    ValidationCacheEntry entry;
    DET_ASSIGN_OR_RETURN(entry.metric, SearcherMetricOfTrial(db_, row.trial_id));
    DET_PREPARE(s,
                "SELECT t.best_validation_id, b.total_batches, t.best_validation_value, "
                "t.latest_validation_id, l.total_batches FROM trials t LEFT JOIN metrics b ON "
                "b.id = t.best_validation_id LEFT JOIN metrics l ON l.id = "
                "t.latest_validation_id WHERE t.id = ?");
    s.Bind(1, row.trial_id);
    DET_ASSIGN_OR_RETURN(bool found, s.Step());
    if (!found) return NotFound("trial " + std::to_string(row.trial_id) + " not found");
    if (!s.IsNull(0) && !s.IsNull(1) && !s.IsNull(2)) {
      entry.stored.best = ValidationPoint{s.Int(0), s.Int(1), s.Double(2)};
    }
    if (!s.IsNull(3) && !s.IsNull(4))
      entry.stored.latest = ValidationPoint{s.Int(3), s.Int(4), std::nullopt};
    entry.now = entry.stored;
    it = cache->emplace(row.trial_id, std::move(entry)).first;
  }
  ValidationCacheEntry& entry = it->second;
  if (!incremental || entry.recompute) {
    entry.recompute = true;
    return Status::Ok();
  }
  // The row just inserted: its id by the unique key the insert used.
  DET_PREPARE(s,
              "SELECT id FROM metrics WHERE trial_id = ? AND trial_run_id = ? AND metric_group = "
              "? AND total_batches = ?");
  s.Bind(1, row.trial_id).Bind(2, row.trial_run_id).Bind(3, row.group).Bind(4, row.total_batches);
  DET_ASSIGN_OR_RETURN(bool found, s.Step());
  if (!found) {
    entry.recompute = true;
    return Status::Ok();
  }
  entry.now.Fold(
      ValidationPoint{s.Int(0), row.total_batches, entry.metric.ValueInReport(row.metrics)},
      entry.metric);
  return Status::Ok();
}

Status SqliteStore::StoreTrialValidationsLocked(const ValidationCache& cache) {
  for (const auto& [trial_id, entry] : cache) {
    if (entry.recompute) {
      DET_ASSIGN_OR_RETURN(TrialValidations v, ComputeFromRows(db_, trial_id, entry.metric));
      DET_RETURN_IF_ERROR(WriteColumns(db_, trial_id, v));
    } else if (!(entry.now == entry.stored)) {
      DET_RETURN_IF_ERROR(WriteColumns(db_, trial_id, entry.now));
    }
  }
  return Status::Ok();
}

Status SqliteStore::RecomputeTrialValidationsLocked(int64_t trial_id) {
  return RecomputeOn(db_, trial_id);
}

Status SqliteStore::BackfillTrialValidationsLocked() {
  std::vector<int64_t> trials;
  {
    DET_PREPARE(s,
                "SELECT DISTINCT trial_id FROM metrics WHERE metric_group = 'validation' AND "
                "archived = 0");
    DET_ASSIGN_OR_RETURN(trials, s.Collect<int64_t>([](const Statement& st) { return st.Int(0); }));
  }
  for (int64_t id : trials) DET_RETURN_IF_ERROR(RecomputeOn(db_, id));
  return Status::Ok();
}

Result<TrialValidationReports> SqliteStore::GetTrialValidations(int64_t trial_id) {
  Reader r = Read();
  // One statement: the trial row and the two metric rows it names, each by primary key.
  const std::string sql =
      std::string("SELECT t.id, b.") +
      "id, b.trial_id, b.trial_run_id, b.total_batches, "
      "b.metric_group, b.metrics, b.report_time, b.archived, l.id, l.trial_id, l.trial_run_id, "
      "l.total_batches, l.metric_group, l.metrics, l.report_time, l.archived FROM trials t LEFT "
      "JOIN metrics b ON b.id = t.best_validation_id LEFT JOIN metrics l ON l.id = "
      "t.latest_validation_id WHERE t.id = ?";
  DET_PREPARE_ON(s, r.db(), sql.c_str());
  s.Bind(1, trial_id);
  DET_ASSIGN_OR_RETURN(bool found, s.Step());
  if (!found) return NotFound("trial " + std::to_string(trial_id) + " not found");
  TrialValidationReports out;
  if (!s.IsNull(1)) out.best = ReadMetricRowAt(s, 1);
  if (!s.IsNull(9)) out.latest = ReadMetricRowAt(s, 9);
  return out;
}

Result<std::optional<double>> SqliteStore::BestExperimentValidation(int64_t experiment_id,
                                                                    bool smaller_is_better) {
  Reader r = Read();
  DET_PREPARE_ON(s, r.db(),
                 smaller_is_better
                     ? "SELECT MIN(best_validation_value) FROM trials WHERE experiment_id = ?"
                     : "SELECT MAX(best_validation_value) FROM trials WHERE experiment_id = ?");
  s.Bind(1, experiment_id);
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row || s.IsNull(0)) return std::optional<double>();
  return std::optional<double>(s.Double(0));
}

}  // namespace det::master::store
