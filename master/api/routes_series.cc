// Metric series downsampled on the server for charts (SeriesService):
//   GET /api/v1/trials/time-series      Determined's CompareTrials: several trials at once
//   GET /api/v1/trials/{trialId}/summarize  Determined's SummarizeTrial (before 0.38): one trial
// Both answer DownsampledMetrics {data: [{batches, values, time, epoch?}], type, group}, at most
// maxDatapoints points per group (default 200), picked as master/core/downsample.h says.
#include <algorithm>
#include <limits>

#include "common/clock.h"
#include "common/whole_int64.h"
#include "master/api/json_views.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::HttpResponse;
using server::Principal;

namespace {

constexpr int64_t kDefaultMaxPoints = 200;  // Determined's default

// A repeated query parameter by its JSON (camelCase) or proto (snake_case) name, as
// grpc-gateway reads both; comma-separated values split too.
std::vector<std::string> Repeated(const HttpRequest& req, const char* camel, const char* snake) {
  std::vector<std::string> out;
  for (const char* name : {camel, snake}) {
    for (const std::string& raw : req.QueryAll(name)) {
      size_t start = 0;
      while (start <= raw.size()) {
        size_t comma = raw.find(',', start);
        if (comma == std::string::npos) comma = raw.size();
        if (comma > start) out.push_back(raw.substr(start, comma - start));
        start = comma + 1;
      }
    }
  }
  return out;
}

Result<int64_t> IntParam(const HttpRequest& req, const char* camel, const char* snake,
                         int64_t fallback) {
  const char* name = req.query.count(camel) != 0 || req.query.count(snake) == 0 ? camel : snake;
  return QueryInt(req, name, fallback);
}

std::string MetricTypeOf(const std::string& group) {
  if (group == "training") return "METRIC_TYPE_TRAINING";
  if (group == "validation") return "METRIC_TYPE_VALIDATION";
  if (group == "profiling") return "METRIC_TYPE_PROFILING";
  return "METRIC_TYPE_UNSPECIFIED";
}

// The group of the request: `group`, or the legacy `metricType` enum; "" when neither.
Result<std::string> GroupParam(const HttpRequest& req) {
  std::string group = req.Query("group");
  std::string type = req.Query("metricType", req.Query("metric_type"));
  std::string from_type;
  if (type == "METRIC_TYPE_TRAINING") {
    from_type = "training";
  } else if (type == "METRIC_TYPE_VALIDATION") {
    from_type = "validation";
  } else if (type == "METRIC_TYPE_PROFILING") {
    from_type = "profiling";
  } else if (!type.empty() && type != "METRIC_TYPE_UNSPECIFIED") {
    return InvalidArgument("metricType: \"" + type +
                           "\" is not METRIC_TYPE_TRAINING, METRIC_TYPE_VALIDATION, "
                           "METRIC_TYPE_PROFILING or METRIC_TYPE_UNSPECIFIED");
  }
  if (!group.empty() && !from_type.empty()) {
    return InvalidArgument("metricType and group: give one of them (got metricType " + type +
                           " and group \"" + group + "\")");
  }
  return group.empty() ? from_type : group;
}

// The query both routes share. `allow_ids`: metricIds ("group.name") are accepted.
Result<server::SeriesQuery> ParseSeriesQuery(const HttpRequest& req, bool allow_ids) {
  server::SeriesQuery q;
  DET_ASSIGN_OR_RETURN(q.max_points, IntParam(req, "maxDatapoints", "max_datapoints", 0));
  if (q.max_points == 0) q.max_points = kDefaultMaxPoints;
  DET_ASSIGN_OR_RETURN(q.start_batches, IntParam(req, "startBatches", "start_batches", 0));
  DET_ASSIGN_OR_RETURN(int64_t end, IntParam(req, "endBatches", "end_batches", 0));
  // 0 (unset) means no upper bound, as Determined.
  q.end_batches = end == 0 ? std::numeric_limits<int64_t>::max() : end;
  DET_ASSIGN_OR_RETURN(std::string group, GroupParam(req));
  std::vector<std::string> names = Repeated(req, "metricNames", "metric_names");
  std::vector<std::string> ids =
      allow_ids ? Repeated(req, "metricIds", "metric_ids") : std::vector<std::string>();
  if (!names.empty() && !ids.empty()) {
    return InvalidArgument("metricNames and metricIds: give one of them");
  }
  for (const std::string& name : names) {
    // Without a group, names are read from both training and validation reports (Determined).
    for (const std::string& g : group.empty() ? std::vector<std::string>{"training", "validation"}
                                              : std::vector<std::string>{group}) {
      auto& list = q.names_by_group[g];
      if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
    }
  }
  for (const std::string& id : ids) {
    size_t dot = id.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == id.size()) {
      return InvalidArgument("metricIds: \"" + id + "\" is not group.name (e.g. training.loss)");
    }
    auto& list = q.names_by_group[id.substr(0, dot)];
    std::string name = id.substr(dot + 1);
    if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
  }
  return q;
}

json DownsampledJson(const std::vector<server::GroupSeries>& all) {
  json out = json::array();
  for (const server::GroupSeries& s : all) {
    json data = json::array();
    for (const server::SeriesPoint& p : s.points) {
      json point = {{"batches", p.batches}, {"values", p.values}, {"time", FormatRfc3339(p.time)}};
      if (p.epoch) point["epoch"] = *p.epoch;
      data.push_back(std::move(point));
    }
    out.push_back({{"data", std::move(data)}, {"type", MetricTypeOf(s.group)}, {"group", s.group}});
  }
  return out;
}

HttpResponse CompareTrials(server::Master* master, const HttpRequest& req) {
  std::vector<int64_t> ids;
  for (const std::string& raw : Repeated(req, "trialIds", "trial_ids")) {
    std::optional<int64_t> parsed = WholeInt64(raw);
    if (!parsed || *parsed <= 0) {
      return ErrorResponse(
          InvalidArgument("trialIds: \"" + raw + "\" is not a positive integer trial id"));
    }
    int64_t v = *parsed;
    if (std::find(ids.begin(), ids.end(), v) == ids.end()) ids.push_back(v);
  }
  if (ids.empty()) return ErrorResponse(InvalidArgument("trialIds: must name at least one trial"));
  for (const auto& [key, value] : req.query) {
    if (key.rfind("timeSeriesFilter", 0) == 0 || key.rfind("time_series_filter", 0) == 0) {
      return ErrorResponse(
          InvalidArgument(key + ": not supported (the x axis of a series is always batches)"));
    }
  }
  Result<server::SeriesQuery> query = ParseSeriesQuery(req, /*allow_ids=*/true);
  if (!query.ok()) return ErrorResponse(query.status());
  std::sort(ids.begin(), ids.end());
  json trials = json::array();
  for (int64_t id : ids) {
    // The trial's own row only, as Determined's get_trials_basic (id, experiment, STATE_<stored
    // state>, times, hparams, runner state): its best and latest validation would read every
    // validation report of the trial, the cost this route exists to avoid.
    server::TrialView trial;
    auto series = master->series()->TrialSeries(id, *query, &trial.row);
    if (!series.ok()) return ErrorResponse(series.status());
    trial.presented_state = "STATE_" + trial.row.state;
    trials.push_back({{"trial", TrialJson(trial)}, {"metrics", DownsampledJson(*series)}});
  }
  return JsonResponse({{"trials", std::move(trials)}});
}

HttpResponse SummarizeTrial(server::Master* master, const HttpRequest& req) {
  Result<int64_t> id = PathId(req, "trialId");
  if (!id.ok()) return ErrorResponse(id.status());
  // The scale chose LTTB's y axis; evenly spaced steps do not depend on it.
  std::string scale = req.Query("scale");
  if (!scale.empty() && scale != "SCALE_UNSPECIFIED" && scale != "SCALE_LINEAR" &&
      scale != "SCALE_LOG") {
    return ErrorResponse(InvalidArgument("scale: \"" + scale +
                                         "\" is not SCALE_LINEAR, SCALE_LOG or SCALE_UNSPECIFIED"));
  }
  Result<server::SeriesQuery> query = ParseSeriesQuery(req, /*allow_ids=*/false);
  if (!query.ok()) return ErrorResponse(query.status());
  auto trial = master->experiments()->GetTrial(*id);
  if (!trial.ok()) return ErrorResponse(trial.status());
  auto series = master->series()->TrialSeries(*id, *query);
  if (!series.ok()) return ErrorResponse(series.status());
  return JsonResponse({{"trial", TrialJson(*trial)}, {"metrics", DownsampledJson(*series)}});
}

}  // namespace

void RegisterSeriesRoutes(server::Router* router, server::Master* master) {
  router->Add("GET", "/api/v1/trials/time-series",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                return CompareTrials(master, req);
              }));
  router->Add("GET", "/api/v1/trials/{trialId}/summarize",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                return SummarizeTrial(master, req);
              }));
}

}  // namespace det::master::api
