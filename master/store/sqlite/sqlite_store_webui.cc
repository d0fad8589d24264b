// The web UI's experiment list: filter, sort and page in SQL so 100,000 experiments stay fast.
#include <string>

#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {

namespace {

std::string OrderExpression(Dialect d, ExperimentSortKey key) {
  switch (key) {
    case ExperimentSortKey::kId:
      return "e.id";
    case ExperimentSortKey::kDescription:
      return "COALESCE(" + sql::JsonText(d, "e.config", {"description"}) + ", '')";
    case ExperimentSortKey::kStartTime:
      return "e.start_time";
    case ExperimentSortKey::kEndTime:
      return "COALESCE(e.end_time, 9223372036854775807)";
    case ExperimentSortKey::kState:
      return "e.state";
    case ExperimentSortKey::kNumTrials:
      return "(SELECT COUNT(*) FROM trials t WHERE t.experiment_id = e.id)";
    case ExperimentSortKey::kProgress:
      return "e.progress";
    case ExperimentSortKey::kUser:
      return "(SELECT u.username FROM users u WHERE u.id = e.owner_id)";
    case ExperimentSortKey::kName:
      return "e.name";  // config.name, kept by 0021's triggers (indexed with id and owner)
    case ExperimentSortKey::kForkedFrom:
      return "COALESCE(e.parent_id, 0)";
    case ExperimentSortKey::kResourcePool:
      return "COALESCE(" + sql::JsonText(d, "e.config", {"resources", "resource_pool"}) + ", '')";
    case ExperimentSortKey::kCheckpointSize:
      return "(SELECT COALESCE(SUM(c.size), 0) FROM checkpoints c JOIN trials t ON "
             "c.trial_id = t.id WHERE t.experiment_id = e.id AND c.state IN ('COMPLETED', "
             "'STATE_COMPLETED'))";
    case ExperimentSortKey::kCheckpointCount:
      return "(SELECT COUNT(*) FROM checkpoints c JOIN trials t ON c.trial_id = t.id "
             "WHERE t.experiment_id = e.id AND c.state IN ('COMPLETED', 'STATE_COMPLETED'))";
    case ExperimentSortKey::kSearcherMetricVal:
      // The best validation value of the searcher metric over the experiment's trials, from
      // the trial summaries kept at report time (experiments without one sort first).
      if (d == Dialect::kPostgres) {
        return "(SELECT CASE WHEN " +
               sql::JsonTruth(d, "e.config", {"searcher", "smaller_is_better"}, 1) +
               " <> 0 THEN MIN(det_json_number(ts.summary_metrics, ARRAY['validation_metrics', "
               "e.config::jsonb #>> '{searcher,metric}', 'min'])) ELSE "
               "MAX(det_json_number(ts.summary_metrics, ARRAY['validation_metrics', "
               "e.config::jsonb #>> '{searcher,metric}', 'max'])) END FROM trials t JOIN "
               "trial_summaries ts ON ts.trial_id = t.id WHERE t.experiment_id = e.id)";
      }
      return "(SELECT CASE WHEN COALESCE(json_extract(e.config, '$.searcher.smaller_is_better'), "
             "1) THEN MIN(json_extract(ts.summary_metrics, '$.validation_metrics.\"' || "
             "json_extract(e.config, '$.searcher.metric') || '\".min')) ELSE "
             "MAX(json_extract(ts.summary_metrics, '$.validation_metrics.\"' || "
             "json_extract(e.config, '$.searcher.metric') || '\".max')) END FROM trials t JOIN "
             "trial_summaries ts ON ts.trial_id = t.id WHERE t.experiment_id = e.id)";
  }
  return "e.id";
}

std::string Placeholders(size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += i == 0 ? "?" : ", ?";
  return out;
}

}  // namespace

Result<std::vector<int64_t>> SqliteStore::ListExperimentIds(const ExperimentFilter& filter,
                                                            const Page& page, int64_t* total) {
  const Dialect d = db_->dialect();
  std::string where = " WHERE 1 = 1";
  if (filter.archived) where += " AND e.archived = ?";
  if (!filter.states.empty())
    where += " AND e.state IN (" + Placeholders(filter.states.size()) + ")";
  if (!filter.usernames.empty() || !filter.user_ids.empty()) {
    // Either list matches (Determined ORs `users` and `userIds`).
    std::string any;
    if (!filter.usernames.empty()) {
      any += "e.owner_id IN (SELECT u.id FROM users u WHERE u.username IN (" +
             Placeholders(filter.usernames.size()) + "))";
    }
    if (!filter.user_ids.empty()) {
      any += std::string(any.empty() ? "" : " OR ") + "e.owner_id IN (" +
             Placeholders(filter.user_ids.size()) + ")";
    }
    where += " AND (" + any + ")";
  }
  for (size_t i = 0; i < filter.labels.size(); ++i) {
    where += " AND " + sql::JsonArrayHasParam(d, "e.config", "labels");
  }
  if (!filter.name.empty()) {
    where += " AND " + sql::Contains(d, "lower(e.name)", "lower(?)");
  }
  if (filter.id_gt) where += " AND e.id > ?";
  if (filter.id_gte) where += " AND e.id >= ?";
  if (filter.id_lt) where += " AND e.id < ?";
  if (filter.id_lte) where += " AND e.id <= ?";
  if (!filter.id_in.empty()) where += " AND e.id IN (" + Placeholders(filter.id_in.size()) + ")";
  if (!filter.id_not_in.empty()) {
    where += " AND e.id NOT IN (" + Placeholders(filter.id_not_in.size()) + ")";
  }
  if (!filter.description.empty()) {
    where += " AND " +
             sql::Contains(
                 d, "lower(COALESCE(" + sql::JsonText(d, "e.config", {"description"}) + ", ''))",
                 "lower(?)");
  }
  // No join: COUNT(*) over the bare table can use an index instead of reading every row (rows
  // carry the context tarball, so a full scan is slow at 100,000 experiments).
  const std::string from = " FROM experiments e";
  auto bind_filter = [&filter](Statement& s) {
    int i = 1;
    if (filter.archived) s.Bind(i++, *filter.archived);
    for (const auto& v : filter.states) s.Bind(i++, v);
    for (const auto& v : filter.usernames) s.Bind(i++, v);
    for (int64_t v : filter.user_ids) s.Bind(i++, v);
    for (const auto& v : filter.labels) s.Bind(i++, v);
    if (!filter.name.empty()) s.Bind(i++, filter.name);
    for (const auto& bound : {filter.id_gt, filter.id_gte, filter.id_lt, filter.id_lte}) {
      if (bound) s.Bind(i++, *bound);
    }
    for (int64_t v : filter.id_in) s.Bind(i++, v);
    for (int64_t v : filter.id_not_in) s.Bind(i++, v);
    if (!filter.description.empty()) s.Bind(i++, filter.description);
    return i;
  };

  Reader r = Read();
  {
    std::string sql = "SELECT COUNT(*)" + from + where;
    Statement c(r.db(), sql.c_str());
    DET_RETURN_IF_ERROR(c.prepared());
    bind_filter(c);
    DET_ASSIGN_OR_RETURN(bool row, c.Step());
    *total = row ? c.Int(0) : 0;
  }
  const char* dir = filter.descending ? " DESC" : " ASC";
  // The only key that can be NULL (no validation yet) sorts as SQLite sorts NULL by default,
  // first ascending and last descending, on PostgreSQL too.
  const char* nulls = filter.sort_by != ExperimentSortKey::kSearcherMetricVal ? ""
                      : filter.descending                                     ? " NULLS LAST"
                                                                              : " NULLS FIRST";
  std::string sql = "SELECT e.id" + from + where + " ORDER BY " +
                    OrderExpression(d, filter.sort_by) + dir + nulls + ", e.id" + dir +
                    " LIMIT ? OFFSET ?";
  Statement s(r.db(), sql.c_str());
  DET_RETURN_IF_ERROR(s.prepared());
  int i = bind_filter(s);
  s.Bind(i, page.limit > 0 ? page.limit : sql::kNoLimit);
  s.Bind(i + 1, page.offset);
  return s.Collect<int64_t>([](const Statement& st) { return st.Int(0); });
}

}  // namespace det::master::store
