// The profiler's system metrics: GET /api/v1/trials/{id}/profiler/available_series and
// /profiler/metrics, as Determined's newline-delimited streams ({"result": ...} per line; with
// follow=true they continue until the trial is finished). Reports arrive through
// POST /api/v1/trials/{id}/metrics with a system group (see routes_trials.cc).
#include <algorithm>

#include "common/clock.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::HttpResponse;
using server::Principal;

namespace {

constexpr const char* kSystemType = "PROFILER_METRIC_TYPE_SYSTEM";
constexpr int64_t kReportsPerRead = 100;
constexpr int64_t kFollowWaitMs = 1000;

json LabelsJson(int64_t trial_id, const core::SystemSeries& s) {
  return json{{"trialId", trial_id},
              {"name", s.name},
              {"agentId", s.agent_id},
              {"gpuUuid", s.gpu_uuid},
              {"metricType", kSystemType}};
}

json SeriesLine(int64_t trial_id, const std::vector<core::SystemSeries>& series) {
  json labels = json::array();
  for (const auto& s : series) labels.push_back(LabelsJson(trial_id, s));
  return json{{"result", {{"labels", labels}}}};
}

HttpResponse AvailableSeries(server::Master* master, HttpRequest& req) {
  Result<int64_t> id = PathId(req, "id");
  if (!id.ok()) return ErrorResponse(id.status());
  bool follow = QueryBool(req, "follow", false);
  auto first = master->profiler()->AvailableSeries(*id);
  if (!first.ok()) return ErrorResponse(first.status());
  HttpResponse resp;
  resp.content_type = "application/x-ndjson";
  std::string line = SeriesLine(*id, *first).dump();
  resp.stream = [master, trial_id = *id, follow, line](server::ResponseStream& out) {
    if (!out.Write(line + "\n") || !follow) return;
    std::string last = line;
    // Send the list again whenever it changes, until the trial is finished.
    while (true) {
      uint64_t seen = master->profiler()->reports();
      bool finished = master->experiments()->TrialFinished(trial_id);
      auto series = master->profiler()->AvailableSeries(trial_id);
      if (!series.ok()) return;
      std::string now = SeriesLine(trial_id, *series).dump();
      if (now != last) {
        if (!out.Write(now + "\n")) return;
        last = now;
      }
      if (finished) return;
      master->profiler()->WaitForReport(seen, kFollowWaitMs);
      if (!out.Write("")) return;
    }
  };
  return resp;
}

HttpResponse Metrics(server::Master* master, HttpRequest& req) {
  Result<int64_t> id = PathId(req, "id");
  if (!id.ok()) return ErrorResponse(id.status());
  std::string name = req.Query("labels.name");
  if (name.empty()) {
    return ErrorResponse(InvalidArgument("labels.name: required (e.g. cpu_util_simple)"));
  }
  std::string type = req.Query("labels.metricType");
  if (!type.empty() && type != kSystemType && type != "PROFILER_METRIC_TYPE_UNSPECIFIED" &&
      type != "PROFILER_METRIC_TYPE_TIMING" && type != "PROFILER_METRIC_TYPE_MISC") {
    return ErrorResponse(InvalidArgument(
        "labels.metricType: '" + type +
        "' is not one of PROFILER_METRIC_TYPE_SYSTEM, _TIMING, _MISC, _UNSPECIFIED"));
  }
  if (Status st = master->profiler()->CheckTrial(*id); !st.ok()) return ErrorResponse(st);
  // Only system metrics are collected; timing and misc series are always empty.
  bool none = type == "PROFILER_METRIC_TYPE_TIMING" || type == "PROFILER_METRIC_TYPE_MISC";
  bool follow = QueryBool(req, "follow", false);
  std::string agent = req.Query("labels.agentId");
  std::string gpu = req.Query("labels.gpuUuid");
  HttpResponse resp;
  resp.content_type = "application/x-ndjson";
  resp.stream = [master, trial_id = *id, name, agent, gpu, follow,
                 none](server::ResponseStream& out) {
    int64_t cursor = 0;
    while (!none) {
      uint64_t seen = master->profiler()->reports();
      bool finished = follow && master->experiments()->TrialFinished(trial_id);
      auto page = master->profiler()->Points(trial_id, name, agent, gpu, cursor, kReportsPerRead);
      if (!page.ok()) return;
      for (const auto& p : page->points) {
        json batch = {{"values", {p.value}},
                      {"batches", json::array()},
                      {"timestamps", {FormatRfc3339(p.time)}},
                      {"labels", LabelsJson(trial_id, p.series)}};
        if (!out.Write(json{{"result", {{"batch", batch}}}}.dump() + "\n")) return;
      }
      bool more = page->last_row != cursor;
      cursor = page->last_row;
      if (more) continue;  // read until caught up
      if (!follow || finished) return;
      master->profiler()->WaitForReport(seen, kFollowWaitMs);
      if (!out.Write("")) return;
    }
  };
  return resp;
}

}  // namespace

HttpResponse ReportSystemMetricsResponse(server::Master* master, const Principal& who,
                                         int64_t trial_id, const std::string& group,
                                         const json& metrics) {
  std::optional<int64_t> run;
  if (const json* r = Field(metrics, "trialRunId", "trial_run_id")) {
    if (r->is_number_integer()) {
      run = r->get<int64_t>();
    } else if (r->is_string()) {  // int64 fields may arrive as strings
      const std::string& text = r->get_ref<const std::string&>();
      if (!text.empty() && text.size() < 19 &&
          std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        run = std::stoll(text);
      }
    }
  }
  if (!run) return ErrorResponse(InvalidArgument("metrics.trialRunId: required integer"));
  const json* inner = Field(metrics, "metrics", "metrics");
  const json* avg =
      inner && inner->is_object() ? Field(*inner, "avgMetrics", "avg_metrics") : nullptr;
  if (avg == nullptr) return ErrorResponse(InvalidArgument("metrics.metrics.avgMetrics: required"));
  std::optional<int64_t> when;
  if (const json* t = Field(metrics, "reportTime", "report_time"); t && t->is_string()) {
    when = ParseRfc3339(t->get<std::string>());
    if (!when) {
      return ErrorResponse(InvalidArgument("metrics.reportTime: '" + t->get<std::string>() +
                                           "' is not an RFC 3339 time"));
    }
  }
  Status st = master->profiler()->Report(who, trial_id, *run, group, *avg, when);
  return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
}

void RegisterProfilerRoutes(server::Router* router, server::Master* master) {
  router->Add("GET", "/api/v1/trials/{id}/profiler/available_series",
              WithAuth(master, ReadTrial(), [master](HttpRequest& req, const Principal&) {
                return AvailableSeries(master, req);
              }));
  router->Add("GET", "/api/v1/trials/{id}/profiler/metrics",
              WithAuth(master, ReadTrial(), [master](HttpRequest& req, const Principal&) {
                return Metrics(master, req);
              }));
}

}  // namespace det::master::api
