// SqliteStore: metric reports written in batches (MetricsService's group commit, and AddMetrics).

#include <map>
#include <set>
#include <utility>

#include <spdlog/spdlog.h>

#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {
namespace {

// The statements one report needs, prepared once per batch (preparing costs more than running
// them). Run(row) gives AddMetrics' semantics except the trial's total_batches, which the caller
// raises once per trial for the whole batch (MAX is order-free).
class MetricWriter {
 public:
  explicit MetricWriter(Db* db)
      // Rows of earlier runs past this report's step were lost with that run's un-checkpointed
      // progress: archive them so every step is shown once.
      : archive_(db,
                 "UPDATE metrics SET archived = 1 WHERE trial_id = ? AND metric_group = ? AND "
                 "trial_run_id < ? AND total_batches >= ? AND archived = 0"),
        // A new (trial, run, group, steps) is one statement; a repeated one (a retry, or a report
        // split in parts, e.g. two validation calls) merges into the stored row, so retries never
        // duplicate and parts add up. Two statements rather than one upsert: the writer must
        // know whether a row was added, and asking first costs a third statement per report.
        insert_(db,
                "INSERT INTO metrics (trial_id, trial_run_id, total_batches, metric_group, "
                "metrics, report_time) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(trial_id, "
                "trial_run_id, metric_group, total_batches) DO NOTHING"),
        merge_(db, "UPDATE metrics SET metrics = " + sql::JsonPatch(db->dialect(), "metrics", "?") +
                       " WHERE trial_id = ? AND trial_run_id = ? AND metric_group = ? AND "
                       "total_batches = ?"),
        progress_(db, "UPDATE trials SET total_batches = " +
                          sql::Greatest(db->dialect(), "total_batches", "?") + " WHERE id = ?"),
        db_(db) {}

  Status prepared() const {
    DET_RETURN_IF_ERROR(archive_.prepared());
    DET_RETURN_IF_ERROR(insert_.prepared());
    DET_RETURN_IF_ERROR(merge_.prepared());
    return progress_.prepared();
  }

  // `*added` tells the trial summary whether the report is a new row it can fold in (no merge
  // into a stored row, no archived rows of an earlier run).
  Status Run(const MetricRow& row, bool* added) {
    archive_.Reset();
    DET_RETURN_IF_ERROR(archive_.Bind(1, row.trial_id)
                            .Bind(2, row.group)
                            .Bind(3, row.trial_run_id)
                            .Bind(4, row.total_batches)
                            .Run());
    const bool archived = db_->Changes() > 0;
    const std::string metrics = row.metrics.dump();
    insert_.Reset();
    insert_.Bind(1, row.trial_id).Bind(2, row.trial_run_id).Bind(3, row.total_batches);
    insert_.Bind(4, row.group).Bind(5, metrics).Bind(6, row.report_time);
    DET_RETURN_IF_ERROR(insert_.Run());
    const bool merges = db_->Changes() == 0;
    *added = !archived && !merges;
    if (!merges) return Status::Ok();
    merge_.Reset();
    merge_.Bind(1, metrics).Bind(2, row.trial_id).Bind(3, row.trial_run_id).Bind(4, row.group);
    return merge_.Bind(5, row.total_batches).Run();
  }

  // training and validation reports move the trial's progress (total_batches).
  static bool MovesProgress(const MetricRow& row) {
    return row.group == "training" || row.group == "validation";
  }

  Status RaiseProgress(int64_t trial_id, int64_t total_batches) {
    progress_.Reset();
    return progress_.Bind(1, total_batches).Bind(2, trial_id).Run();
  }

 private:
  Statement archive_;
  Statement insert_;
  Statement merge_;
  Statement progress_;
  Db* db_;
};

// PostgreSQL answers every statement in a round trip, and the row-by-row path costs three per
// report plus two per trial: a batch whose reports cannot see each other's writes (Independent)
// is written there with one statement per kind for the whole batch, its rows passed as one JSON
// array (json_to_recordset), so a group commit costs a handful of round trips. SQLite runs its
// statements in-process and keeps the row-by-row path.
//
// Independent: no two reports share their unique key (trial, run, group, steps), and the reports
// of one (trial, group) all belong to one run, so none archives or merges into another's row.
bool Independent(std::span<const MetricRow* const> rows) {
  std::map<std::pair<int64_t, std::string>, int64_t> run_of;
  std::set<std::pair<std::pair<int64_t, std::string>, int64_t>> keys;
  for (const MetricRow* r : rows) {
    auto group = std::make_pair(r->trial_id, r->group);
    auto [it, fresh] = run_of.emplace(group, r->trial_run_id);
    if (!fresh && it->second != r->trial_run_id) return false;
    if (!keys.emplace(group, r->total_batches).second) return false;
  }
  return true;
}

// Archives, probes and inserts an Independent batch in three statements (two when nothing is
// archived). (*added)[i] as MetricWriter::Run's `added`, except that a report whose archive
// another report of the batch already did reads as not added (a recompute, never a wrong fold).
Status WriteIndependentBatch(Db* db, std::span<const MetricRow* const> rows,
                             std::vector<bool>* added) {
  nlohmann::json keys = nlohmann::json::array();
  nlohmann::json values = nlohmann::json::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    const MetricRow& r = *rows[i];
    keys.push_back({{"i", i},
                    {"t", r.trial_id},
                    {"r", r.trial_run_id},
                    {"g", r.group},
                    {"b", r.total_batches}});
    values.push_back({{"t", r.trial_id},
                      {"r", r.trial_run_id},
                      {"g", r.group},
                      {"b", r.total_batches},
                      {"m", r.metrics.dump()},
                      {"rt", r.report_time}});
  }
  const std::string keys_json = keys.dump();
  Statement probe(db,
                  "SELECT v.i, CASE WHEN EXISTS (SELECT 1 FROM metrics m WHERE m.trial_id = v.t "
                  "AND m.metric_group = v.g AND m.trial_run_id < v.r AND m.total_batches >= v.b "
                  "AND m.archived = 0) THEN 1 ELSE 0 END, CASE WHEN EXISTS (SELECT 1 FROM "
                  "metrics m WHERE m.trial_id = v.t AND m.trial_run_id = v.r AND m.metric_group "
                  "= v.g AND m.total_batches = v.b) THEN 1 ELSE 0 END FROM "
                  "json_to_recordset(CAST(? AS json)) AS v(i bigint, t bigint, r bigint, g text, "
                  "b bigint)");
  DET_RETURN_IF_ERROR(probe.prepared());
  probe.Bind(1, keys_json);
  added->assign(rows.size(), false);
  bool archives = false;
  while (true) {
    DET_ASSIGN_OR_RETURN(bool more, probe.Step());
    if (!more) break;
    const bool archive = probe.Int(1) != 0;
    archives = archives || archive;
    (*added)[static_cast<size_t>(probe.Int(0))] = !archive && probe.Int(2) == 0;
  }
  if (archives) {
    Statement archive(db,
                      "UPDATE metrics SET archived = 1 FROM json_to_recordset(CAST(? AS json)) AS "
                      "v(t bigint, r bigint, g text, b bigint) WHERE metrics.trial_id = v.t AND "
                      "metrics.metric_group = v.g AND metrics.trial_run_id < v.r AND "
                      "metrics.total_batches >= v.b AND metrics.archived = 0");
    DET_RETURN_IF_ERROR(archive.prepared());
    DET_RETURN_IF_ERROR(archive.Bind(1, keys_json).Run());
  }
  Statement insert(db,
                   "INSERT INTO metrics (trial_id, trial_run_id, total_batches, metric_group, "
                   "metrics, report_time) SELECT v.t, v.r, v.b, v.g, v.m, v.rt FROM "
                   "json_to_recordset(CAST(? AS json)) AS v(t bigint, r bigint, b bigint, g text, "
                   "m text, rt bigint) ON CONFLICT(trial_id, trial_run_id, metric_group, "
                   "total_batches) DO UPDATE SET metrics = " +
                       sql::JsonPatch(db->dialect(), "metrics.metrics", "excluded.metrics"));
  DET_RETURN_IF_ERROR(insert.prepared());
  return insert.Bind(1, values.dump()).Run();
}

// Every trial's highest total_batches of the batch, in one statement (PostgreSQL).
Status RaiseProgressBatch(Db* db, const std::map<int64_t, int64_t>& progress) {
  nlohmann::json values = nlohmann::json::array();
  for (const auto& [trial_id, high] : progress) values.push_back({{"id", trial_id}, {"b", high}});
  Statement s(db,
              "UPDATE trials SET total_batches = GREATEST(trials.total_batches, v.b) FROM "
              "json_to_recordset(CAST(? AS json)) AS v(id bigint, b bigint) WHERE trials.id = "
              "v.id");
  DET_RETURN_IF_ERROR(s.prepared());
  return s.Bind(1, values.dump()).Run();
}

// The stored summaries of the batch's trials not cached yet, in one statement (PostgreSQL):
// into `summaries`, or an empty one for a trial without a row; a trial whose row has none yet
// (migrated) goes to `*uncomputed` and is left to FoldTrialSummaryLocked, which computes it.
Status LoadSummaries(Db* db, std::span<const MetricRow* const> rows,
                     std::map<int64_t, nlohmann::json>* summaries, std::set<int64_t>* uncomputed) {
  std::set<int64_t> wanted;
  for (const MetricRow* r : rows) {
    if (!summaries->contains(r->trial_id)) wanted.insert(r->trial_id);
  }
  if (wanted.empty()) return Status::Ok();
  Statement s(db,
              "SELECT v.id, ts.trial_id, ts.summary_metrics FROM json_to_recordset(CAST(? AS "
              "json)) AS v(id bigint) LEFT JOIN trial_summaries ts ON ts.trial_id = v.id");
  DET_RETURN_IF_ERROR(s.prepared());
  nlohmann::json ids = nlohmann::json::array();
  for (int64_t id : wanted) ids.push_back({{"id", id}});
  s.Bind(1, ids.dump());
  while (true) {
    DET_ASSIGN_OR_RETURN(bool more, s.Step());
    if (!more) break;
    const int64_t id = s.Int(0);
    if (s.IsNull(1)) {
      summaries->emplace(id, nlohmann::json::object());
    } else if (s.IsNull(2)) {
      uncomputed->insert(id);
    } else {
      nlohmann::json j = nlohmann::json::parse(s.Text(2), nullptr, /*allow_exceptions=*/false);
      summaries->emplace(id, j.is_object() ? std::move(j) : nlohmann::json::object());
    }
  }
  return Status::Ok();
}

// Trials whose parsed summary stays between batches (a few KiB each).
constexpr size_t kMaxCachedSummaries = 16384;

}  // namespace

std::vector<Status> SqliteStore::AddMetricsBatch(std::span<const MetricRow> rows) {
  std::vector<const MetricRow*> ptrs;
  ptrs.reserve(rows.size());
  for (const MetricRow& r : rows) ptrs.push_back(&r);
  std::lock_guard<std::mutex> lock(mu_);
  // SQLite changes its sync level only between transactions; switching costs no I/O.
  if (metrics_sync_pragma_.empty()) return WriteMetricsLocked(ptrs);
  if (Status st = Exec(metrics_sync_pragma_); !st.ok()) {
    return std::vector<Status>(rows.size(), st);
  }
  std::vector<Status> out = WriteMetricsLocked(ptrs);
  // Every other write must be synced again (this cannot fail outside a transaction; retried).
  Status restored = Exec(sync_pragma_);
  if (!restored.ok()) restored = Exec(sync_pragma_);
  if (!restored.ok()) {
    spdlog::error("sqlite: cannot restore {}: {}", sync_pragma_, restored.ToString());
  }
  return out;
}

// One transaction for the whole batch. The fast path writes every row straight (on PostgreSQL
// an Independent batch in a few statements); only when a row fails is the transaction rolled
// back and written again with a savepoint per row, so the bad row fails alone (savepoints cost
// about as much as the writes, and rows rarely fail).
std::vector<Status> SqliteStore::WriteMetricsLocked(std::span<const MetricRow* const> rows) {
  std::vector<Status> results(rows.size());
  if (rows.empty()) return results;
  auto fail_all = [&](const Status& st) {
    for (Status& r : results) r = st;
    return results;
  };
  MetricWriter writer(db_);
  if (Status st = writer.prepared(); !st.ok()) return fail_all(st);
  const bool postgres = db_->dialect() == Dialect::kPostgres;
  const bool independent = postgres && rows.size() > 1 && Independent(rows);

  for (bool per_row_savepoints : {false, true}) {
    if (Status st = Exec("BEGIN IMMEDIATE"); !st.ok()) return fail_all(st);
    std::map<int64_t, int64_t> progress;          // trial id -> highest total_batches in the batch
    std::map<int64_t, nlohmann::json> summaries;  // trial id -> summary, written at the end
    ValidationCache validations;  // store13: trial id -> best/latest validation columns
    bool failed = false;
    const bool batched = independent && !per_row_savepoints;
    auto take_cached_summary = [&](int64_t trial_id) {
      if (summaries.contains(trial_id)) return;
      // The summary the last commit stored, still parsed; the batch owns it until its commit.
      if (auto cached = summary_cache_.find(trial_id); cached != summary_cache_.end()) {
        summaries.emplace(trial_id, std::move(cached->second));
        summary_cache_.erase(cached);
      }
    };
    auto note_progress = [&](const MetricRow& row) {
      if (!MetricWriter::MovesProgress(row)) return;
      int64_t& high = progress[row.trial_id];
      high = std::max(high, row.total_batches);
    };
    if (batched) {
      // The folds run after every row is in: a recompute (a report that is not `added`) already
      // counts the batch's later reports of its group, or of its whole trial when the trial had
      // no summary yet, so those are not folded again.
      auto write_batch = [&]() -> Status {
        for (const MetricRow* row : rows) take_cached_summary(row->trial_id);
        std::set<int64_t> uncomputed;
        DET_RETURN_IF_ERROR(LoadSummaries(db_, rows, &summaries, &uncomputed));
        std::vector<bool> added;
        DET_RETURN_IF_ERROR(WriteIndependentBatch(db_, rows, &added));
        std::set<int64_t> whole;
        std::set<std::pair<int64_t, std::string>> regrouped;
        for (size_t i = 0; i < rows.size(); ++i) {
          const MetricRow& row = *rows[i];
          const bool computes_all =
              uncomputed.contains(row.trial_id) && !summaries.contains(row.trial_id);
          if (!whole.contains(row.trial_id) && !regrouped.contains({row.trial_id, row.group})) {
            DET_RETURN_IF_ERROR(FoldTrialSummaryLocked(row, added[i], &summaries));
            if (computes_all) {
              whole.insert(row.trial_id);
            } else if (!added[i]) {
              regrouped.insert({row.trial_id, row.group});
            }
          }
          DET_RETURN_IF_ERROR(FoldTrialValidationLocked(row, added[i], &validations));
          note_progress(row);
        }
        return Status::Ok();
      };
      failed = !write_batch().ok();
    }
    for (size_t i = 0; i < rows.size() && !batched && !failed; ++i) {
      const MetricRow& row = *rows[i];
      take_cached_summary(row.trial_id);
      auto write = [&]() -> Status {
        bool added = false;
        DET_RETURN_IF_ERROR(writer.Run(row, &added));
        DET_RETURN_IF_ERROR(FoldTrialSummaryLocked(row, added, &summaries));
        return FoldTrialValidationLocked(row, added, &validations);
      };
      Status st;
      if (per_row_savepoints) {
        st = Exec("SAVEPOINT metric");
        if (st.ok()) st = write();
        if (st.ok()) {
          st = Exec("RELEASE metric");
        } else {
          (void)Exec("ROLLBACK TO metric");
          (void)Exec("RELEASE metric");
        }
      } else {
        st = write();
        failed = !st.ok();
      }
      results[i] = st;
      if (st.ok()) note_progress(row);
    }
    if (failed) {
      (void)Exec("ROLLBACK");
      continue;  // again, row by row
    }
    Status st;
    if (postgres && progress.size() > 1) {
      st = RaiseProgressBatch(db_, progress);
    } else {
      for (const auto& [trial_id, high] : progress) {
        st = writer.RaiseProgress(trial_id, high);
        if (!st.ok()) break;
      }
    }
    if (st.ok()) st = StoreTrialSummariesLocked(summaries);
    if (st.ok()) st = StoreTrialValidationsLocked(validations);
    if (st.ok()) st = Exec("COMMIT");
    if (!st.ok()) {
      (void)Exec("ROLLBACK");
      return fail_all(st);
    }
    if (summary_cache_.size() + summaries.size() > kMaxCachedSummaries) summary_cache_.clear();
    for (auto& [trial_id, summary] : summaries) summary_cache_[trial_id] = std::move(summary);
    return results;
  }
  return results;  // not reached: the second pass always returns
}

}  // namespace det::master::store
