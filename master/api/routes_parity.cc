// Routes the upstream CLI of Determined 0.38 calls beyond the core set:
// GET /api/v1/experiments/{id}/validation-history.
#include "master/api/json_views.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/api/validation_history.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::Principal;

namespace {

Result<json> ValidationHistoryJson(server::Master* master, int64_t experiment_id) {
  DET_ASSIGN_OR_RETURN(server::ExperimentView exp,
                       master->experiments()->GetExperiment(experiment_id));
  const json searcher = exp.row.config.value("searcher", json::object());
  std::string metric = searcher.value("metric", "");
  bool smaller = !searcher.contains("smaller_is_better") ||
                 !searcher["smaller_is_better"].is_boolean() ||
                 searcher["smaller_is_better"].get<bool>();
  DET_ASSIGN_OR_RETURN(std::vector<server::TrialView> trials,
                       master->experiments()->ListTrials(experiment_id));
  std::vector<ValidationPoint> points;
  for (const auto& t : trials) {
    DET_ASSIGN_OR_RETURN(std::vector<store::MetricRow> rows,
                         master->experiments()->ListMetrics(t.row.id, "validation"));
    for (const auto& m : rows) {
      if (m.archived) continue;
      // Validation reports are stored as {"validation_metrics": ...} (older: avg_metrics).
      const json avg = m.metrics.contains("validation_metrics")
                           ? m.metrics["validation_metrics"]
                           : m.metrics.value("avg_metrics", json::object());
      if (!avg.contains(metric) || !avg[metric].is_number()) continue;
      points.push_back({t.row.id, m.report_time, avg[metric].get<double>()});
    }
  }
  json entries = json::array();
  for (const ValidationPoint& p : ValidationHistory(std::move(points), smaller)) {
    entries.push_back({{"trialId", p.trial_id},
                       {"endTime", TimeOrNull(p.report_time)},
                       {"searcherMetric", p.metric}});
  }
  return json{{"validationHistory", entries}};
}

}  // namespace

void RegisterParityRoutes(server::Router* router, server::Master* master) {
  router->Add("GET", "/api/v1/experiments/{id}/validation-history",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                auto body = ValidationHistoryJson(master, *id);
                return body.ok() ? JsonResponse(*body) : ErrorResponse(body.status());
              }));
}

}  // namespace det::master::api
