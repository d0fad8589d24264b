// A page of trial views read in three statements per chunk of ids (Store::GetTrialViewRows):
// at 100 trials a page, five small reads per trial cost more in statements and round trips than
// the rows themselves.
#include <algorithm>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "master/store/sqlite/metric_rows.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"
#include "master/store/sqlite/trial_rows.h"

namespace det::master::store {

namespace {

using nlohmann::json;

// Ids bound per statement: well under SQLite's smallest bound-parameter limit (999).
constexpr size_t kIdsPerStatement = 500;

std::string IdPlaceholders(size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += i == 0 ? "?" : ", ?";
  return out;
}

void BindIds(Statement& s, std::span<const int64_t> ids) {
  for (size_t i = 0; i < ids.size(); ++i) s.Bind(static_cast<int>(i + 1), ids[i]);
}

// A metric row selected as kMetricColumns from column `first` on (NULL id: none).
std::optional<MetricRow> OptMetricAt(const Statement& s, int first) {
  if (s.IsNull(first)) return std::nullopt;
  return ReadMetricRowAt(s, first);
}

json SummaryObject(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : json::object();
}

}  // namespace

Result<std::vector<TrialViewRows>> SqliteStore::GetTrialViewRows(
    const std::vector<int64_t>& trial_ids) {
  std::map<int64_t, TrialViewRows> found;
  std::vector<int64_t> summaries_to_compute;  // a summary row not computed yet (before 0011)
  {
    Reader r = Read();
    for (size_t start = 0; start < trial_ids.size(); start += kIdsPerStatement) {
      std::span<const int64_t> ids(trial_ids.data() + start,
                                   std::min(kIdsPerStatement, trial_ids.size() - start));
      const std::string in = " IN (" + IdPlaceholders(ids.size()) + ")";
      {
        // The trial row, its summary and the two validation reports it names, by key.
        const std::string sql =
            std::string("SELECT ") + kTrialColumnsOfT +
            ", ts.trial_id, ts.summary_metrics, b.id, b.trial_id, b.trial_run_id, "
            "b.total_batches, b.metric_group, b.metrics, b.report_time, b.archived, l.id, "
            "l.trial_id, l.trial_run_id, l.total_batches, l.metric_group, l.metrics, "
            "l.report_time, l.archived FROM trials t LEFT JOIN trial_summaries ts ON "
            "ts.trial_id = t.id LEFT JOIN metrics b ON b.id = t.best_validation_id LEFT JOIN "
            "metrics l ON l.id = t.latest_validation_id WHERE t.id" +
            in;
        DET_PREPARE_ON(s, r.db(), sql.c_str());
        BindIds(s, ids);
        while (true) {
          DET_ASSIGN_OR_RETURN(bool row, s.Step());
          if (!row) break;
          TrialViewRows v;
          v.row = ReadTrialRow(s);
          constexpr int kSummary = kTrialColumnCount;
          if (s.IsNull(kSummary)) {
            v.summary_metrics = json::object();  // no metrics reported
          } else if (s.IsNull(kSummary + 1)) {
            summaries_to_compute.push_back(v.row.id);
          } else {
            v.summary_metrics = SummaryObject(s.Text(kSummary + 1));
          }
          v.validations.best = OptMetricAt(s, kSummary + 2);
          v.validations.latest = OptMetricAt(s, kSummary + 10);
          int64_t id = v.row.id;
          found.emplace(id, std::move(v));
        }
      }
      {
        const std::string sql =
            "SELECT DISTINCT trial_id, task_id FROM allocations WHERE trial_id" + in +
            " ORDER BY trial_id, task_id";
        DET_PREPARE_ON(s, r.db(), sql.c_str());
        BindIds(s, ids);
        while (true) {
          DET_ASSIGN_OR_RETURN(bool row, s.Step());
          if (!row) break;
          auto it = found.find(s.Int(0));
          if (it != found.end()) it->second.task_ids.push_back(s.Text(1));
        }
      }
      {
        const std::string sql = std::string("SELECT ") + kCheckpointColumns +
                                " FROM checkpoints WHERE trial_id" + in +
                                " ORDER BY trial_id, steps_completed, report_time";
        DET_PREPARE_ON(s, r.db(), sql.c_str());
        BindIds(s, ids);
        while (true) {
          DET_ASSIGN_OR_RETURN(bool row, s.Step());
          if (!row) break;
          CheckpointRow c = ReadCheckpointRow(s);
          auto it = found.find(c.trial_id);
          if (it != found.end()) it->second.checkpoints.push_back(std::move(c));
        }
      }
    }
  }
  // Rare (trials from before migration 0011): computed and stored as GetTrialSummaryMetrics
  // does, with the reader released (it takes the write connection).
  for (int64_t id : summaries_to_compute) {
    DET_ASSIGN_OR_RETURN(found[id].summary_metrics, GetTrialSummaryMetrics(id));
  }
  std::vector<TrialViewRows> out;
  out.reserve(found.size());
  for (int64_t id : trial_ids) {
    auto it = found.find(id);
    if (it == found.end()) continue;
    out.push_back(std::move(it->second));
    found.erase(it);  // an id given twice yields one entry
  }
  return out;
}

}  // namespace det::master::store
