// SqliteStore: metric reports written in batches (MetricsService's group commit, and AddMetrics).

#include <map>

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

// Trials whose parsed summary stays between batches (a few KiB each).
constexpr size_t kMaxCachedSummaries = 16384;

}  // namespace

std::vector<Status> SqliteStore::AddMetricsBatch(std::span<const MetricRow> rows) {
  std::vector<const MetricRow*> ptrs;
  ptrs.reserve(rows.size());
  for (const MetricRow& r : rows) ptrs.push_back(&r);
  std::lock_guard<std::mutex> lock(mu_);
  return WriteMetricsLocked(ptrs);
}

// One transaction for the whole batch. The fast path writes every row straight; only when a row
// fails is the transaction rolled back and written again with a savepoint per row, so the bad
// row fails alone (savepoints cost about as much as the writes, and rows rarely fail).
std::vector<Status> SqliteStore::WriteMetricsLocked(std::span<const MetricRow* const> rows) {
  std::vector<Status> results(rows.size());
  if (rows.empty()) return results;
  auto fail_all = [&](const Status& st) {
    for (Status& r : results) r = st;
    return results;
  };
  MetricWriter writer(db_);
  if (Status st = writer.prepared(); !st.ok()) return fail_all(st);

  for (bool per_row_savepoints : {false, true}) {
    if (Status st = Exec("BEGIN IMMEDIATE"); !st.ok()) return fail_all(st);
    std::map<int64_t, int64_t> progress;          // trial id -> highest total_batches in the batch
    std::map<int64_t, nlohmann::json> summaries;  // trial id -> summary, written at the end
    ValidationCache validations;  // store13: trial id -> best/latest validation columns
    bool failed = false;
    for (size_t i = 0; i < rows.size() && !failed; ++i) {
      const MetricRow& row = *rows[i];
      if (!summaries.contains(row.trial_id)) {
        // The summary the last commit stored, still parsed; the batch owns it until its commit.
        if (auto cached = summary_cache_.find(row.trial_id); cached != summary_cache_.end()) {
          summaries.emplace(row.trial_id, std::move(cached->second));
          summary_cache_.erase(cached);
        }
      }
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
      if (st.ok() && MetricWriter::MovesProgress(row)) {
        int64_t& high = progress[row.trial_id];
        high = std::max(high, row.total_batches);
      }
    }
    if (failed) {
      (void)Exec("ROLLBACK");
      continue;  // again, row by row
    }
    Status st;
    for (const auto& [trial_id, high] : progress) {
      st = writer.RaiseProgress(trial_id, high);
      if (!st.ok()) break;
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
