// Reads that must stay fast at 100,000 trials and 10,000,000 metric rows (counts, pages of ids,
// downsampled series) and the bulk import that fills such a store (bench/store_scale.cc).
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <unordered_set>

#include "master/core/downsample.h"
#include "master/core/trial_summary.h"
#include "master/store/sqlite/metric_rows.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {

namespace {

// Binds `id` when nonzero, else NULL (the next id: see sql::IdOrNext).
void BindId(Statement& s, int i, int64_t id) {
  if (id != 0) {
    s.Bind(i, id);
  } else {
    s.Bind(i, std::optional<int64_t>());
  }
}

}  // namespace

Status SqliteStore::BulkInsert(const std::vector<ExperimentRow>& experiments,
                               const std::string& model_definition,
                               const std::vector<TrialRow>& trials,
                               const std::vector<MetricRow>& metrics) {
  std::lock_guard<std::mutex> lock(mu_);
  summary_cache_.clear();  // it writes trial summaries itself
  DET_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  auto insert_all = [&]() -> Status {
    const Dialect d = db_->dialect();
    DET_PREPARE(e,
                "INSERT INTO experiments (id, state, config, original_config, owner_id, job_id, "
                "start_time, end_time, archived, progress, parent_id, notes) VALUES (" +
                    sql::IdOrNext(d, "experiments") +
                    ", ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id");
    for (const ExperimentRow& row : experiments) {
      e.Reset();
      BindId(e, 1, row.id);
      e.Bind(2, row.state).Bind(3, row.config.dump()).Bind(4, row.original_config);
      e.Bind(5, row.owner_id).Bind(6, row.job_id).Bind(7, row.start_time).Bind(8, row.end_time);
      e.Bind(9, row.archived).Bind(10, row.progress).Bind(11, row.parent_id);
      e.Bind(12, row.notes);
      DET_ASSIGN_OR_RETURN(bool inserted, e.Step());
      if (!inserted) return Internal("insert experiment: no id returned");
      int64_t id = e.Int(0);
      e.Reset();
      DET_RETURN_IF_ERROR(InsertExperimentBlobsLocked(id, model_definition, row.snapshot));
    }
    DET_PREPARE(t,
                "INSERT INTO trials (id, experiment_id, request_id, seed, hparams, state, "
                "start_time, end_time, restarts, run_id, total_batches, runner_state, "
                "searcher_metric, task_id, metadata, warm_start_checkpoint_uuid) VALUES (" +
                    sql::IdOrNext(d, "trials") + ", ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const TrialRow& row : trials) {
      t.Reset();
      BindId(t, 1, row.id);
      t.Bind(2, row.experiment_id).Bind(3, row.request_id).Bind(4, row.seed);
      t.Bind(5, row.hparams.dump()).Bind(6, row.state).Bind(7, row.start_time);
      t.Bind(8, row.end_time).Bind(9, row.restarts).Bind(10, row.run_id);
      t.Bind(11, row.total_batches).Bind(12, row.runner_state).Bind(13, row.searcher_metric);
      t.Bind(14, row.task_id).Bind(15, row.metadata.dump());
      t.Bind(16, row.warm_start_checkpoint_uuid);
      DET_RETURN_IF_ERROR(t.Run());
    }
    DET_PREPARE(m,
                "INSERT INTO metrics (id, trial_id, trial_run_id, total_batches, metric_group, "
                "metrics, report_time, archived) VALUES (" +
                    sql::IdOrNext(d, "metrics") + ", ?, ?, ?, ?, ?, ?, ?)");
    for (const MetricRow& row : metrics) {
      m.Reset();
      BindId(m, 1, row.id);
      m.Bind(2, row.trial_id).Bind(3, row.trial_run_id).Bind(4, row.total_batches);
      m.Bind(5, row.group).Bind(6, row.metrics.dump()).Bind(7, row.report_time);
      m.Bind(8, row.archived);
      DET_RETURN_IF_ERROR(m.Run());
    }
    // The trials' summary metrics, as ingestion keeps them (without a row the trial reads as
    // having reported nothing): the unarchived reports folded in report order into what an
    // earlier batch stored.
    std::vector<const MetricRow*> order;
    order.reserve(metrics.size());
    for (const MetricRow& row : metrics) {
      if (!row.archived) order.push_back(&row);
    }
    std::stable_sort(order.begin(), order.end(), [](const MetricRow* a, const MetricRow* b) {
      return a->report_time < b->report_time;
    });
    DET_PREPARE(prev, "SELECT summary_metrics FROM trial_summaries WHERE trial_id = ?");
    std::map<int64_t, nlohmann::json> summaries;
    for (const MetricRow* row : order) {
      auto [it, added] = summaries.try_emplace(row->trial_id, nlohmann::json::object());
      if (added) {
        prev.Reset();
        prev.Bind(1, row->trial_id);
        DET_ASSIGN_OR_RETURN(bool found, prev.Step());
        if (found && !prev.IsNull(0)) {
          nlohmann::json stored = nlohmann::json::parse(prev.Text(0), nullptr, false);
          if (stored.is_object()) it->second = std::move(stored);
        }
      }
      core::AccumulateSummary(it->second[core::SummaryKeyOfGroup(row->group)],
                              core::AveragesOfReport(row->metrics));
    }
    DET_PREPARE(ts,
                "INSERT INTO trial_summaries (trial_id, summary_metrics) VALUES (?, ?) "
                "ON CONFLICT (trial_id) DO UPDATE SET summary_metrics = excluded.summary_metrics");
    for (const auto& [trial_id, summary] : summaries) {
      ts.Reset();
      ts.Bind(1, trial_id).Bind(2, summary.dump());
      DET_RETURN_IF_ERROR(ts.Run());
    }
    // store13: the best and latest validation of every trial the batch gave reports.
    std::set<int64_t> validated;
    for (const MetricRow& row : metrics) {
      if (row.group == "validation") validated.insert(row.trial_id);
    }
    for (int64_t trial_id : validated)
      DET_RETURN_IF_ERROR(RecomputeTrialValidationsLocked(trial_id));
    // Rows given their ids must not collide with the next generated ones.
    return db_->SyncIdSequences();
  };
  Status st = insert_all();
  if (!st.ok()) {
    (void)Exec("ROLLBACK");
    return st;
  }
  return Exec("COMMIT");
}

Result<int64_t> SqliteStore::CountTrials(int64_t experiment_id) {
  Reader r = Read();
  DET_PREPARE_ON(s, r.db(), "SELECT COUNT(*) FROM trials WHERE experiment_id = ?");
  s.Bind(1, experiment_id);
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : 0;
}

Result<std::vector<int64_t>> SqliteStore::ListTrialIds(int64_t experiment_id, const Page& page,
                                                       bool descending, int64_t* total) {
  Reader r = Read();
  {
    DET_PREPARE_ON(c, r.db(), "SELECT COUNT(*) FROM trials WHERE experiment_id = ?");
    c.Bind(1, experiment_id);
    DET_ASSIGN_OR_RETURN(bool row, c.Step());
    *total = row ? c.Int(0) : 0;
  }
  // Both orders walk trials_experiment (experiment_id, then rowid) without a sort.
  DET_PREPARE_ON(s, r.db(),
                 descending ? "SELECT id FROM trials WHERE experiment_id = ? ORDER BY id DESC "
                              "LIMIT ? OFFSET ?"
                            : "SELECT id FROM trials WHERE experiment_id = ? ORDER BY id "
                              "LIMIT ? OFFSET ?");
  s.Bind(1, experiment_id)
      .Bind(2, page.limit > 0 ? page.limit : sql::kNoLimit)
      .Bind(3, page.offset);
  return s.Collect<int64_t>([](const Statement& st) { return st.Int(0); });
}

Result<std::vector<MetricRow>> SqliteStore::SampleMetrics(int64_t trial_id,
                                                          const std::string& group,
                                                          int64_t start_batches,
                                                          int64_t end_batches, int64_t max_points) {
  std::vector<MetricRow> out;
  if (max_points <= 0 || end_batches < start_batches) return out;
  Reader r = Read();
  // Every query below is a seek on metrics_series (trial, group, archived, steps).
  const std::string range =
      " FROM metrics WHERE trial_id = ?1 AND metric_group = ?2 AND archived = 0 AND "
      "total_batches >= ?3 AND total_batches <= ?4";
  {
    // A short range is answered whole; counting stops one past the limit, so a long series is
    // not counted through.
    std::string sql = "SELECT COUNT(*) FROM (SELECT 1" + range + " LIMIT ?5) AS capped";
    DET_PREPARE_ON(c, r.db(), sql.c_str());
    c.Bind(1, trial_id).Bind(2, group).Bind(3, start_batches).Bind(4, end_batches);
    c.Bind(5, max_points + 1);
    DET_ASSIGN_OR_RETURN(bool row, c.Step());
    if (row && c.Int(0) <= max_points) {
      std::string all =
          std::string("SELECT ") + kMetricColumns + range + " ORDER BY total_batches, id";
      DET_PREPARE_ON(s, r.db(), all.c_str());
      s.Bind(1, trial_id).Bind(2, group).Bind(3, start_batches).Bind(4, end_batches);
      return s.Collect<MetricRow>(ReadMetricRow);
    }
  }
  int64_t first = 0, last = 0;
  {
    std::string sql = "SELECT total_batches" + range + " ORDER BY total_batches LIMIT 1";
    DET_PREPARE_ON(lo, r.db(), sql.c_str());
    lo.Bind(1, trial_id).Bind(2, group).Bind(3, start_batches).Bind(4, end_batches);
    DET_ASSIGN_OR_RETURN(bool row, lo.Step());
    if (!row) return out;
    first = lo.Int(0);
    sql = "SELECT total_batches" + range + " ORDER BY total_batches DESC LIMIT 1";
    DET_PREPARE_ON(hi, r.db(), sql.c_str());
    hi.Bind(1, trial_id).Bind(2, group).Bind(3, start_batches).Bind(4, end_batches);
    DET_ASSIGN_OR_RETURN(row, hi.Step());
    if (!row) return out;
    last = hi.Int(0);
  }
  // The first row at or after each target; a target in a gap lands on the row after it, which
  // a later target may land on too (kept once).
  std::string sql =
      std::string("SELECT ") + kMetricColumns + range + " ORDER BY total_batches, id LIMIT 1";
  DET_PREPARE_ON(seek, r.db(), sql.c_str());
  std::unordered_set<int64_t> seen;
  for (int64_t target : core::DownsampleTargets(first, last, max_points)) {
    seek.Reset();
    seek.Bind(1, trial_id).Bind(2, group).Bind(3, target).Bind(4, end_batches);
    DET_ASSIGN_OR_RETURN(bool row, seek.Step());
    if (!row) break;
    if (!seen.insert(seek.Int(0)).second) continue;
    out.push_back(ReadMetricRow(seek));
  }
  return out;
}

}  // namespace det::master::store
