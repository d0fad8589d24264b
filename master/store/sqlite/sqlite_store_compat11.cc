// SqliteStore: trial summary metrics (table trial_summaries, migration 0011).
#include <map>

#include "master/core/trial_summary.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {
namespace {

using nlohmann::json;

json ParseObject(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : json::object();
}

}  // namespace

// The summary of `group` (every group when empty) from the trial's unarchived rows, in report
// order: {group key: summary}. REQUIRES: mu_ held.
static Result<json> RecomputeSummaries(Db* db, int64_t trial_id, const std::string& group) {
  Statement s(db,
              "SELECT metric_group, metrics FROM metrics WHERE trial_id = ? AND archived = 0 AND "
              "(? = '' OR metric_group = ?) ORDER BY report_time, id");
  DET_RETURN_IF_ERROR(s.prepared());
  s.Bind(1, trial_id).Bind(2, group).Bind(3, group);
  std::map<std::string, std::vector<json>> reports;
  while (true) {
    DET_ASSIGN_OR_RETURN(bool more, s.Step());
    if (!more) break;
    reports[s.Text(0)].push_back(core::AveragesOfReport(ParseObject(s.Text(1))));
  }
  json out = json::object();
  for (const auto& [g, rows] : reports) {
    out[core::SummaryKeyOfGroup(g)] = core::SummaryOfReports(rows);
  }
  return out;
}

static Status StoreSummary(Db* db, int64_t trial_id, const json& summary) {
  Statement s(db,
              "INSERT INTO trial_summaries (trial_id, summary_metrics) VALUES (?, ?) "
              "ON CONFLICT(trial_id) DO UPDATE SET summary_metrics = excluded.summary_metrics");
  DET_RETURN_IF_ERROR(s.prepared());
  return s.Bind(1, trial_id).Bind(2, summary.dump()).Run();
}

Status SqliteStore::FoldTrialSummaryLocked(const MetricRow& row, bool incremental,
                                           std::map<int64_t, json>* cache) {
  const std::string key = core::SummaryKeyOfGroup(row.group);
  auto it = cache->find(row.trial_id);
  if (it == cache->end()) {
    DET_PREPARE(s, "SELECT summary_metrics FROM trial_summaries WHERE trial_id = ?");
    s.Bind(1, row.trial_id);
    DET_ASSIGN_OR_RETURN(bool found, s.Step());
    if (found && s.IsNull(0)) {
      // Not computed yet (migrated trial): every group from the rows, this report included.
      DET_ASSIGN_OR_RETURN(json all, RecomputeSummaries(db_, row.trial_id, ""));
      (*cache)[row.trial_id] = std::move(all);
      return Status::Ok();
    }
    it = cache->emplace(row.trial_id, found ? ParseObject(s.Text(0)) : json::object()).first;
  }
  json& summary = it->second;
  if (incremental) {
    core::AccumulateSummary(summary[key], core::AveragesOfReport(row.metrics));
    return Status::Ok();
  }
  DET_ASSIGN_OR_RETURN(json group, RecomputeSummaries(db_, row.trial_id, row.group));
  if (group.contains(key)) {
    summary[key] = group[key];
  } else {
    summary.erase(key);
  }
  return Status::Ok();
}

Status SqliteStore::StoreTrialSummariesLocked(const std::map<int64_t, json>& cache) {
  if (db_->dialect() == Dialect::kPostgres && cache.size() > 1) {
    // One statement for them all: a round trip per trial is what PostgreSQL's ingest costs
    // (sqlite_store_metrics_ingest.cc).
    json values = json::array();
    for (const auto& [trial_id, summary] : cache) {
      values.push_back({{"id", trial_id}, {"s", summary.dump()}});
    }
    DET_PREPARE(s,
                "INSERT INTO trial_summaries (trial_id, summary_metrics) SELECT v.id, v.s FROM "
                "json_to_recordset(CAST(? AS json)) AS v(id bigint, s text) ON CONFLICT(trial_id) "
                "DO UPDATE SET summary_metrics = excluded.summary_metrics");
    return s.Bind(1, values.dump()).Run();
  }
  for (const auto& [trial_id, summary] : cache) {
    DET_RETURN_IF_ERROR(StoreSummary(db_, trial_id, summary));
  }
  return Status::Ok();
}

Result<json> SqliteStore::GetTrialSummaryMetrics(int64_t trial_id) {
  {
    // store13: on a read connection; only a summary not computed yet takes the writer.
    Reader r = Read();
    DET_PREPARE_ON(s, r.db(),
                   "SELECT t.id, ts.trial_id, ts.summary_metrics FROM trials t LEFT JOIN "
                   "trial_summaries ts ON ts.trial_id = t.id WHERE t.id = ?");
    s.Bind(1, trial_id);
    DET_ASSIGN_OR_RETURN(bool found, s.Step());
    if (!found) return NotFound("trial " + std::to_string(trial_id) + " not found");
    if (s.IsNull(1)) return json::object();  // no metrics reported
    if (!s.IsNull(2)) return ParseObject(s.Text(2));
  }
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(json summary, RecomputeSummaries(db_, trial_id, ""));
  DET_RETURN_IF_ERROR(StoreSummary(db_, trial_id, summary));
  return summary;
}

}  // namespace det::master::store
