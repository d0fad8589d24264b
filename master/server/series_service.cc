#include "master/server/series_service.h"

namespace det::master::server {

using nlohmann::json;

namespace {

// The metric values of a stored report: {"validation_metrics": {...}} for validation reports,
// {"avg_metrics": {...}, ...} for the others.
const json* ReportValues(const json& metrics) {
  if (!metrics.is_object()) return nullptr;
  for (const char* key : {"validation_metrics", "avg_metrics"}) {
    auto it = metrics.find(key);
    if (it != metrics.end() && it->is_object()) return &*it;
  }
  return nullptr;
}

std::optional<double> Epoch(const json* values) {
  if (values == nullptr) return std::nullopt;
  for (const char* key : {"epochs", "epoch"}) {
    auto it = values->find(key);
    if (it != values->end() && it->is_number()) return it->get<double>();
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<GroupSeries>> SeriesService::TrialSeries(int64_t trial_id,
                                                            const SeriesQuery& query,
                                                            store::TrialRow* trial) {
  if (query.max_points < 1 || query.max_points > kMaxPoints) {
    return InvalidArgument("maxDatapoints: must be between 1 and " + std::to_string(kMaxPoints) +
                           " (got " + std::to_string(query.max_points) + ")");
  }
  if (query.start_batches < 0) {
    return InvalidArgument("startBatches: must be >= 0 (got " +
                           std::to_string(query.start_batches) + ")");
  }
  if (query.end_batches < query.start_batches) {
    return InvalidArgument("endBatches: must be >= startBatches (got " +
                           std::to_string(query.end_batches) + " < " +
                           std::to_string(query.start_batches) + ")");
  }
  DET_ASSIGN_OR_RETURN(store::TrialRow row, store_->GetTrial(trial_id));
  if (trial != nullptr) *trial = std::move(row);
  std::vector<GroupSeries> out;
  // No metric named: every metric of the training and validation reports (the web UI's charts;
  // Determined's own clients always name them).
  std::map<std::string, std::vector<std::string>> every = {{"training", {}}, {"validation", {}}};
  const auto& groups = query.names_by_group.empty() ? every : query.names_by_group;
  for (const auto& [group, names] : groups) {
    if (group.empty()) return InvalidArgument("group: must not be empty");
    DET_ASSIGN_OR_RETURN(std::vector<store::MetricRow> rows,
                         store_->SampleMetrics(trial_id, group, query.start_batches,
                                               query.end_batches, query.max_points));
    if (rows.empty()) continue;
    GroupSeries series{group, {}};
    series.points.reserve(rows.size());
    for (const store::MetricRow& row : rows) {
      const json* values = ReportValues(row.metrics);
      SeriesPoint p;
      p.batches = row.total_batches;
      p.time = row.report_time;
      p.values = json::object();
      if (names.empty() && values != nullptr) {
        for (const auto& [name, v] : values->items()) {
          if (v.is_number()) p.values[name] = v;
        }
      }
      for (const std::string& name : names) {
        json v;  // null when the report lacks it, as Determined
        if (values != nullptr) {
          auto it = values->find(name);
          if (it != values->end()) v = *it;
        }
        p.values[name] = std::move(v);
      }
      p.epoch = Epoch(values);
      series.points.push_back(std::move(p));
    }
    out.push_back(std::move(series));
  }
  return out;
}

Result<std::vector<int64_t>> SeriesService::TrialIdsPage(int64_t experiment_id,
                                                         const store::Page& page, bool descending,
                                                         int64_t* total) {
  if (page.offset < 0) {
    return InvalidArgument("offset: must be >= 0 (got " + std::to_string(page.offset) + ")");
  }
  DET_RETURN_IF_ERROR(store_->GetExperiment(experiment_id).status());
  return store_->ListTrialIds(experiment_id, page, descending, total);
}

}  // namespace det::master::server
