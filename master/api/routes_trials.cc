// Trials and what trial processes call: metrics, searcher operations, checkpoints, logs,
// preemption signals.
#include <algorithm>
#include <cmath>

#include "common/whole_int64.h"
#include "master/api/json_views.h"
#include "master/api/list_sort.h"
#include "master/api/log_filter.h"
#include "master/api/log_stream.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/core/system_metrics.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::HttpResponse;
using server::Principal;

namespace {

// Who a trial process's report comes from, for ExperimentService: its allocation, or "" for a
// user (whose reports never mark the trial's run).
server::ExperimentService::Reporter ReportFrom(const Principal& who) {
  return who.is_allocation ? who.allocation_id : std::string();
}

constexpr int64_t kMaxLongPollMs = 60 * 1000;

// Metric values may arrive as "NaN"/"Infinity" strings (JSON has no such numbers); keep them.
json MetricsPayload(const json& metrics, const std::string& group) {
  const json* avg = Field(metrics, "avgMetrics", "avg_metrics");
  json out;
  if (group == "validation") {
    out["validation_metrics"] = avg ? *avg : json::object();
  } else {
    out["avg_metrics"] = avg ? *avg : json::object();
    if (const json* b = Field(metrics, "batchMetrics", "batch_metrics")) out["batch_metrics"] = *b;
  }
  return out;
}

Result<int64_t> IntField(const json& obj, const char* camel, const char* snake) {
  const json* f = Field(obj, camel, snake);
  if (f == nullptr) return InvalidArgument(std::string(camel) + ": required");
  if (f->is_number_integer()) return f->get<int64_t>();
  if (f->is_string()) {
    if (std::optional<int64_t> v = WholeInt64(f->get<std::string>())) return *v;
  }
  return InvalidArgument(std::string(camel) + ": must be an integer (got " + f->dump() + ")");
}

// GET /api/v1/trials/{id}/workloads: training, validation and checkpoint entries by step.
json Workloads(server::Master* master, int64_t trial_id, Status* st) {
  auto training = master->experiments()->ListMetrics(trial_id, "training");
  auto validation = master->experiments()->ListMetrics(trial_id, "validation");
  auto ckpts = master->checkpoints()->ListTrialCheckpoints(trial_id);
  if (!training.ok() || !validation.ok() || !ckpts.ok()) {
    *st = !training.ok()     ? training.status()
          : !validation.ok() ? validation.status()
                             : ckpts.status();
    return json();
  }
  struct Entry {
    int64_t step;
    int order;
    int64_t time;
    json body;
  };
  std::vector<Entry> entries;
  for (const auto& m : *training) {
    json j = MetricsJson(m);
    entries.push_back({m.total_batches,
                       0,
                       m.report_time,
                       {{"training",
                         {{"totalBatches", m.total_batches},
                          {"metrics", j["metrics"]},
                          {"endTime", j["endTime"]},
                          {"numInputs", 0}}}}});
  }
  for (const auto& m : *validation) {
    json j = MetricsJson(m);
    entries.push_back({m.total_batches,
                       1,
                       m.report_time,
                       {{"validation",
                         {{"totalBatches", m.total_batches},
                          {"metrics", j["metrics"]},
                          {"endTime", j["endTime"]},
                          {"numInputs", 0}}}}});
  }
  for (const auto& c : *ckpts) {
    entries.push_back({c.steps_completed,
                       2,
                       c.report_time,
                       {{"checkpoint",
                         {{"uuid", c.uuid},
                          {"totalBatches", c.steps_completed},
                          {"state", "STATE_" + c.state},
                          {"endTime", FormatRfc3339(c.report_time)},
                          {"resources", c.resources},
                          {"metadata", c.metadata}}}}});
  }
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.step != b.step) return a.step < b.step;
    return a.order < b.order;
  });
  json out = json::array();
  for (auto& e : entries) out.push_back(std::move(e.body));
  return out;
}

LogSource TrialLogSource(server::Master* master, int64_t trial_id) {
  server::ExperimentService* experiments = master->experiments();
  return LogSource{
      [experiments, trial_id](int64_t after, int64_t limit, bool desc) {
        return experiments->TrialLogs(trial_id, after, limit, desc);
      },
      [experiments, trial_id] { return experiments->TrialFinished(trial_id); },
      [experiments, trial_id] { experiments->WaitForTrialLogs(trial_id, 1000); }};
}

// One row of trialv1.MetricsReport; `metrics` keeps the stored shape ({"avg_metrics": ...} or
// {"validation_metrics": ...}), which is what the SDK reads.
json MetricsReportJson(const store::MetricRow& m) {
  return json{{"id", m.id},
              {"trialId", m.trial_id},
              {"trialRunId", m.trial_run_id},
              {"totalBatches", m.total_batches},
              {"endTime", FormatRfc3339(m.report_time)},
              {"metrics", m.metrics},
              {"group", m.group},
              {"archived", m.archived}};
}

// GET /api/v1/trials/metrics/{trial,training,validation}_metrics: every stored report of the
// given trials (ascending trial id, then step), as newline-delimited {"result":{"metrics":[..]}}
// chunks of at most 1000 reports, like grpc-gateway streams. It does not follow running trials.
HttpResponse TrialsMetrics(server::Master* master, const HttpRequest& req, std::string group) {
  if (group.empty()) {
    group = req.Query("group");
    if (group.empty()) return ErrorResponse(InvalidArgument("group: required (e.g. training)"));
  }
  std::vector<int64_t> ids;
  for (const std::string& raw : req.QueryAll("trialIds")) {
    std::optional<int64_t> parsed = WholeInt64(raw);
    if (!parsed || *parsed <= 0) {
      return ErrorResponse(
          InvalidArgument("trialIds: \"" + raw + "\" is not a positive integer trial id"));
    }
    int64_t v = *parsed;
    if (std::find(ids.begin(), ids.end(), v) != ids.end()) {
      return ErrorResponse(InvalidArgument("trialIds: duplicate id " + raw));
    }
    ids.push_back(v);
  }
  if (ids.empty()) return ErrorResponse(InvalidArgument("trialIds: must specify at least one"));
  std::sort(ids.begin(), ids.end());
  constexpr size_t kChunk = 1000;
  std::string body;
  for (int64_t id : ids) {
    auto trial = master->experiments()->GetTrial(id);
    if (!trial.ok()) return ErrorResponse(trial.status());
    auto rows = master->experiments()->ListMetrics(id, group);
    if (!rows.ok()) return ErrorResponse(rows.status());
    std::stable_sort(rows->begin(), rows->end(), [](const auto& a, const auto& b) {
      return a.total_batches < b.total_batches;
    });
    for (size_t i = 0; i < rows->size(); i += kChunk) {
      json chunk = json::array();
      for (size_t j = i; j < std::min(rows->size(), i + kChunk); ++j) {
        chunk.push_back(MetricsReportJson((*rows)[j]));
      }
      body += json{{"result", {{"metrics", chunk}}}}.dump() + "\n";
    }
  }
  HttpResponse resp;
  resp.content_type = "application/x-ndjson";
  resp.body = std::move(body);
  return resp;
}

}  // namespace

json MetricsReportJsonOf(const store::MetricRow& m) { return MetricsReportJson(m); }

namespace {

// One entry of POST /api/v1/task/logs: an object of string fields, and a log line of at most
// kMaxLogLineBytes (the agent cuts lines at 8 KiB; a larger one is not a log line).
constexpr size_t kMaxLogLineBytes = 64 * 1024;
Status CheckLogEntry(const json& l, size_t i) {
  std::string where = "logs[" + std::to_string(i) + "]";
  if (!l.is_object()) return InvalidArgument(where + ": must be an object");
  for (const char* key :
       {"taskId", "task_id", "allocationId", "allocation_id", "agentId", "agent_id", "containerId",
        "container_id", "level", "stdtype", "source", "log", "timestamp"}) {
    if (l.contains(key) && !l[key].is_string()) {
      return InvalidArgument(where + "." + key + ": must be a string");
    }
  }
  if (l.contains("log") && l["log"].is_string() &&
      l["log"].get_ref<const std::string&>().size() > kMaxLogLineBytes) {
    return InvalidArgument(
        where + ".log: " + std::to_string(l["log"].get_ref<const std::string&>().size()) +
        " bytes exceeds the limit of " + std::to_string(kMaxLogLineBytes) + " bytes per log line");
  }
  return Status::Ok();
}

}  // namespace

Result<store::TaskLogRow> TaskLogRowOf(server::Master* master, const Principal& who,
                                       const json& l) {
  store::TaskLogRow r;
  r.task_id = l.value("taskId", l.value("task_id", std::string()));
  r.allocation_id = l.value("allocationId", l.value("allocation_id", std::string()));
  r.agent_id = l.value("agentId", l.value("agent_id", std::string()));
  r.container_id = l.value("containerId", l.value("container_id", std::string()));
  if (const json* rank = Field(l, "rankId", "rank_id"); rank && rank->is_number_integer()) {
    r.rank_id = rank->get<int64_t>();
  }
  r.level = l.value("level", std::string());
  r.stdtype = l.value("stdtype", std::string());
  r.source = l.value("source", std::string("task"));
  r.log = l.value("log", std::string());
  if (const json* ts = Field(l, "timestamp", "timestamp"); ts && ts->is_string()) {
    r.timestamp = ParseRfc3339(ts->get<std::string>()).value_or(0);
  }
  // A user posting an unmanaged trial's output: the trial is known by its task.
  if (!who.is_allocation) {
    r.trial_id = master->unmanaged()->TrialOfTask(r.task_id).value_or(0);
    DET_RETURN_IF_ERROR(AuthorizeTaskReport(master, who, r.task_id, r.trial_id));
  }
  return r;
}

void RegisterTrialRoutes(server::Router* router, server::Master* master) {
  router->Add("GET", "/api/v1/trials/{id}",
              WithAuth(master, ReadTrial(), [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                auto v = master->experiments()->GetTrial(*id);
                if (!v.ok()) return ErrorResponse(v.status());
                return JsonResponse({{"trial", TrialJson(*v)}});
              }));

  // Logs are kept until their trial is deleted (there is no retention policy yet): -1, which
  // Determined's web UI shows as "retained forever".
  router->Add("GET", "/api/v1/trials/{id}/remaining_log_retention_days",
              WithAuth(master, ReadTrial(), [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                auto v = master->experiments()->GetTrial(*id);
                if (!v.ok()) return ErrorResponse(v.status());
                return JsonResponse({{"remainingDays", -1}});
              }));

  router->Add("GET", "/api/v1/trials/{id}/workloads",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Status st;
                json all = Workloads(master, *id, &st);
                if (!st.ok()) return ErrorResponse(st);
                auto page = Paginate(req, all, "workloads");
                return page.ok() ? JsonResponse(*page) : ErrorResponse(page.status());
              }));

  for (const auto& [route, group] :
       std::vector<std::pair<std::string, std::string>>{{"trial_metrics", ""},
                                                        {"training_metrics", "training"},
                                                        {"validation_metrics", "validation"}}) {
    router->Add(
        "GET", "/api/v1/trials/metrics/" + route,
        WithAuth(master, Auth::kUser, [master, group = group](HttpRequest& req, const Principal&) {
          return TrialsMetrics(master, req, group);
        }));
  }

  // Trials (inference tasks) that used a checkpoint, and the metrics they reported.
  router->Add(
      "POST", "/api/v1/trial-source-info",
      WithAuth(master, TrialChecked(), [master](HttpRequest& req, const Principal& who) {
        Result<json> body = ParseBody(req);
        if (!body.ok()) return ErrorResponse(body.status());
        const json* info = Field(*body, "trialSourceInfo", "trial_source_info");
        if (info == nullptr || !info->is_object()) {
          return ErrorResponse(InvalidArgument("trialSourceInfo: required object"));
        }
        store::TrialSourceInfoRow row;
        Result<int64_t> trial = IntField(*info, "trialId", "trial_id");
        if (!trial.ok()) return ErrorResponse(trial.status());
        row.trial_id = *trial;
        if (Status st = AuthorizeOn(master, who, ReportTrial(), std::to_string(*trial)); !st.ok()) {
          return ErrorResponse(st);
        }
        const json* uuid = Field(*info, "checkpointUuid", "checkpoint_uuid");
        if (uuid == nullptr || !uuid->is_string() || uuid->get<std::string>().empty()) {
          return ErrorResponse(InvalidArgument("trialSourceInfo.checkpointUuid: required string"));
        }
        row.checkpoint_uuid = uuid->get<std::string>();
        const json* type = Field(*info, "trialSourceInfoType", "trial_source_info_type");
        row.source_type = type && type->is_string() ? type->get<std::string>() : "";
        if (row.source_type != "TRIAL_SOURCE_INFO_TYPE_INFERENCE" &&
            row.source_type != "TRIAL_SOURCE_INFO_TYPE_FINE_TUNING") {
          return ErrorResponse(InvalidArgument(
              "trialSourceInfo.trialSourceInfoType: \"" + row.source_type +
              "\" is not TRIAL_SOURCE_INFO_TYPE_INFERENCE or TRIAL_SOURCE_INFO_TYPE_FINE_TUNING"));
        }
        if (Field(*info, "modelId", "model_id") != nullptr) {
          Result<int64_t> v = IntField(*info, "modelId", "model_id");
          if (!v.ok()) return ErrorResponse(v.status());
          row.model_id = *v;
        }
        if (Field(*info, "modelVersion", "model_version") != nullptr) {
          Result<int64_t> v = IntField(*info, "modelVersion", "model_version");
          if (!v.ok()) return ErrorResponse(v.status());
          row.model_version = *v;
        }
        Status st = master->checkpoints()->AddTrialSourceInfo(row);
        if (!st.ok()) return ErrorResponse(st);
        return JsonResponse({{"trialId", row.trial_id}, {"checkpointUuid", row.checkpoint_uuid}});
      }));

  router->Add("GET", "/api/v1/checkpoints/{uuid}/metrics",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                std::string type = req.Query("trialSourceInfoType");
                if (type == "TRIAL_SOURCE_INFO_TYPE_UNSPECIFIED") type.clear();
                auto rows = master->checkpoints()->CheckpointTrialMetrics(req.params["uuid"], type,
                                                                          req.Query("metricGroup"));
                if (!rows.ok()) return ErrorResponse(rows.status());
                json out = json::array();
                for (const auto& m : *rows) out.push_back(MetricsReportJson(m));
                return JsonResponse({{"metrics", out}});
              }));

  router->Add("GET", "/api/v1/trials/{id}/metrics",
              WithAuth(master, ReadTrial(), [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                auto rows = master->experiments()->ListMetrics(*id, req.Query("group"));
                if (!rows.ok()) return ErrorResponse(rows.status());
                json out = json::array();
                for (const auto& m : *rows) out.push_back(MetricsJson(m));
                return JsonResponse({{"metrics", out}});
              }));

  // Inline: memory checks, then a deferred answer once the report is committed (a hot path).
  router->AddInline(
      "POST", "/api/v1/trials/{id}/metrics",
      WithAuth(master, ReportTrial(), [master](HttpRequest& req, const Principal& who) {
        Result<int64_t> id = PathId(req, "id");
        if (!id.ok()) return ErrorResponse(id.status());
        Result<json> body = ParseBody(req);
        if (!body.ok()) return ErrorResponse(body.status());
        const json* metrics = Field(*body, "metrics", "metrics");
        if (metrics == nullptr || !metrics->is_object()) {
          return ErrorResponse(InvalidArgument("metrics: required object"));
        }
        std::string group = "training";
        if (const json* g = Field(*body, "group", "group"); g && g->is_string()) {
          group = g->get<std::string>();
        }
        if (core::IsSystemMetricGroup(group)) {
          // Written synchronously: on a worker, not the io thread.
          return server::HttpResponse::OnWorker([master, who, id = *id, group, metrics = *metrics] {
            return ReportSystemMetricsResponse(master, who, id, group, metrics);
          });
        }
        Result<int64_t> run = IntField(*metrics, "trialRunId", "trial_run_id");
        if (!run.ok()) return ErrorResponse(run.status());
        Result<int64_t> steps = IntField(*metrics, "stepsCompleted", "steps_completed");
        if (!steps.ok()) return ErrorResponse(steps.status());
        const json* inner = Field(*metrics, "metrics", "metrics");
        if (inner == nullptr || !inner->is_object()) {
          return ErrorResponse(InvalidArgument("metrics.metrics: required object"));
        }
        json payload = MetricsPayload(*inner, group);
        // Unmanaged trials have no run in the master: their service checks the run id.
        if (!who.is_allocation && master->unmanaged()->IsUnmanagedTrial(*id)) {
          return server::HttpResponse::OnWorker(
              [master, id = *id, run = *run, steps = *steps, group, payload] {
                Status st = master->unmanaged()->ReportMetrics(id, run, steps, group, payload);
                return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
              });
        }
        // Answered once the report is committed; no thread waits meanwhile.
        return server::HttpResponse::Deferred(
            [master, who, id = *id, run = *run, steps = *steps, group,
             payload = std::move(payload)](server::Responder respond) mutable {
              master->experiments()->ReportMetrics(
                  who, id, run, steps, group, std::move(payload),
                  [respond = std::move(respond)](Status st) {
                    respond(st.ok() ? JsonResponse(json::object()) : ErrorResponse(st));
                  });
            });
      }));

  router->Add("GET", "/api/v1/trials/{id}/searcher/operation",
              WithAuth(master, ReportTrial(), [master](HttpRequest& req, const Principal& who) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<int64_t> wait = QueryInt(req, "timeoutSeconds", 10);
                if (!wait.ok()) return ErrorResponse(wait.status());
                int64_t wait_ms = std::min(*wait * 1000, kMaxLongPollMs);
                return server::HttpResponse::Deferred(
                    [master, id = *id, wait_ms, from = ReportFrom(who)](server::Responder respond) {
                      master->experiments()->GetSearcherOperation(
                          id, wait_ms,
                          [respond](Result<server::SearcherOpView> op) {
                            if (!op.ok()) return respond(ErrorResponse(op.status()));
                            json j_op = nullptr;
                            if (op->length) {
                              j_op = {{"validateAfter",
                                       {{"requestId", op->request_id.value_or("")},
                                        {"length", std::to_string(*op->length)}}}};
                            }
                            respond(JsonResponse({{"op", j_op}, {"completed", op->completed}}));
                          },
                          from);
                    });
              }));

  router->Add("POST", "/api/v1/trials/{id}/searcher/completed_operation",
              WithAuth(master, ReportTrial(), [master](HttpRequest& req, const Principal& who) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                const json* op = Field(*body, "op", "op");
                if (op == nullptr) return ErrorResponse(InvalidArgument("op: required"));
                Result<int64_t> length = IntField(*op, "length", "length");
                if (!length.ok()) return ErrorResponse(length.status());
                const json* metric = Field(*body, "searcherMetric", "searcher_metric");
                if (metric == nullptr || !metric->is_number()) {
                  return ErrorResponse(InvalidArgument("searcherMetric: required number"));
                }
                return DeferredStatus([master, id = *id, length = static_cast<uint64_t>(*length),
                                       metric = metric->get<double>(),
                                       from = ReportFrom(who)](server::Done<Status> done) {
                  master->experiments()->CompleteSearcherOperation(id, length, metric,
                                                                   std::move(done), from);
                });
              }));

  router->Add("POST", "/api/v1/trials/{id}/progress",
              WithAuth(master, ReportTrial(), [master](HttpRequest& req, const Principal& who) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                const json* p = body->is_number() ? &*body : Field(*body, "progress", "progress");
                if (p == nullptr || !p->is_number()) {
                  return ErrorResponse(InvalidArgument("progress: required number"));
                }
                if (master->unmanaged()->IsUnmanagedTrial(*id)) {
                  Status st = master->unmanaged()->ReportProgress(*id, p->get<double>());
                  return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
                }
                return DeferredStatus([master, id = *id, fraction = p->get<double>(),
                                       from = ReportFrom(who)](server::Done<Status> done) {
                  master->experiments()->ReportProgress(id, fraction, std::move(done), from);
                });
              }));

  router->Add("POST", "/api/v1/trials/{id}/early_exit",
              WithAuth(master, ReportTrial(), [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                const json* reason = Field(*body, "reason", "reason");
                if (const json* ee = Field(*body, "earlyExit", "early_exit")) {
                  reason = Field(*ee, "reason", "reason");
                }
                if (reason == nullptr || !reason->is_string()) {
                  return ErrorResponse(InvalidArgument("reason: required string"));
                }
                return DeferredStatus([master, id = *id, reason = reason->get<std::string>()](
                                          server::Done<Status> done) {
                  master->experiments()->ReportEarlyExit(id, reason, std::move(done));
                });
              }));

  router->Add("POST", "/api/v1/trials/{id}/runner/metadata",
              WithAuth(master, ReportTrial(), [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                const json* md = Field(*body, "metadata", "metadata");
                const json* state = Field(md ? *md : *body, "state", "state");
                if (state == nullptr || !state->is_string()) {
                  return ErrorResponse(InvalidArgument("state: required string"));
                }
                Status st = master->experiments()->SetRunnerState(*id, state->get<std::string>());
                return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
              }));

  auto set_md = WithAuth(master, ReportTrial(), [master](HttpRequest& req, const Principal&) {
    Result<int64_t> id = PathId(req, "id");
    if (!id.ok()) return ErrorResponse(id.status());
    Result<json> body = ParseBody(req);
    if (!body.ok()) return ErrorResponse(body.status());
    const json* md = Field(*body, "metadata", "metadata");
    if (md == nullptr) return ErrorResponse(InvalidArgument("metadata: required object"));
    auto r = master->experiments()->SetTrialMetadata(*id, *md);
    if (!r.ok()) return ErrorResponse(r.status());
    return JsonResponse({{"metadata", *r}});
  });
  router->Add("POST", "/api/v1/runs/{id}/metadata", set_md);
  router->Add("GET", "/api/v1/runs/{id}/metadata",
              WithAuth(master, ReadTrial(), [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                auto r = master->experiments()->GetTrialMetadata(*id);
                if (!r.ok()) return ErrorResponse(r.status());
                return JsonResponse({{"metadata", *r}});
              }));

  router->Add("GET", "/api/v1/trials/{id}/logs",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                auto t = master->experiments()->GetTrial(*id);
                if (!t.ok()) return ErrorResponse(t.status());
                return StreamLogLines(TrialLogSource(master, *id), req);
              }));

  router->Add("GET", "/api/v1/trials/{id}/logs/fields",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                auto t = master->experiments()->GetTrial(*id);
                if (!t.ok()) return ErrorResponse(t.status());
                return StreamLogFields(TrialLogSource(master, *id), req, false);
              }));

  router->Add("POST", "/api/v1/task/logs",
              WithAuth(master, TrialChecked(), [master](HttpRequest& req, const Principal& who) {
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                const json* logs = Field(*body, "logs", "logs");
                if (logs == nullptr || !logs->is_array()) {
                  return ErrorResponse(InvalidArgument("logs: required list"));
                }
                std::vector<store::TaskLogRow> rows;
                for (size_t i = 0; i < logs->size(); ++i) {
                  const json& l = (*logs)[i];
                  if (Status st = CheckLogEntry(l, i); !st.ok()) return ErrorResponse(st);
                  Result<store::TaskLogRow> r = TaskLogRowOf(master, who, l);
                  if (!r.ok()) return ErrorResponse(r.status());
                  rows.push_back(std::move(r).value());
                }
                Status st = master->experiments()->AddTaskLogs(who, std::move(rows));
                return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
              }));

  router->Add(
      "POST", "/api/v1/checkpoints",
      WithAuth(master, TrialChecked(), [master](HttpRequest& req, const Principal& who) {
        Result<json> body = ParseBody(req);
        if (!body.ok()) return ErrorResponse(body.status());
        const json& c = body->contains("checkpoint") ? (*body)["checkpoint"] : *body;
        store::CheckpointRow row;
        row.uuid = c.value("uuid", "");
        row.task_id = c.value("taskId", c.value("task_id", std::string()));
        row.allocation_id = c.value("allocationId", c.value("allocation_id", std::string()));
        row.state = c.value("state", std::string("STATE_COMPLETED"));
        if (const json* r = Field(c, "resources", "resources")) row.resources = *r;
        if (const json* m = Field(c, "metadata", "metadata")) row.metadata = *m;
        if (!who.is_allocation) {
          // An unmanaged trial's checkpoint, reported by its script for its task.
          row.trial_id = master->unmanaged()->TrialOfTask(row.task_id).value_or(0);
          if (Status st = AuthorizeTaskReport(master, who, row.task_id, row.trial_id); !st.ok()) {
            return ErrorResponse(st);
          }
        }
        Status st = master->experiments()->ReportCheckpoint(who, std::move(row));
        return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
      }));

  router->Add(
      "GET", "/api/v1/allocations/{id}/signals/preemption",
      WithAuth(master, ReportAllocation(), [master](HttpRequest& req, const Principal&) {
        Result<int64_t> timeout = QueryInt(req, "timeoutSeconds", 0);
        if (!timeout.ok() || req.query.count("timeout_seconds")) {
          timeout = QueryInt(req, "timeout_seconds", 0);
        }
        if (!timeout.ok()) return ErrorResponse(timeout.status());
        std::string id = req.params["id"];
        int64_t timeout_ms = std::min(*timeout * 1000, kMaxLongPollMs);
        return server::HttpResponse::Deferred([master, id, timeout_ms](server::Responder respond) {
          master->allocations()->WaitPreemption(id, timeout_ms, [respond](Result<bool> r) {
            respond(r.ok() ? JsonResponse({{"preempt", *r}}) : ErrorResponse(r.status()));
          });
        });
      }));

  router->Add(
      "GET", "/api/v1/allocations/{id}/resources/{rid}/rendezvous",
      WithAuth(master, ReportAllocation(), [master](HttpRequest& req, const Principal& who) {
        Result<int64_t> timeout = QueryInt(req, "timeoutSeconds", 60);
        if (!timeout.ok()) return ErrorResponse(timeout.status());
        std::string id = req.params["id"], rid = req.params["rid"];
        int64_t timeout_ms = std::min(*timeout * 1000, kMaxLongPollMs);
        return server::HttpResponse::Deferred([master, who, id, rid,
                                               timeout_ms](server::Responder respond) {
          master->allocations()->Rendezvous(who, id, rid, timeout_ms, [respond](Result<json> r) {
            respond(r.ok() ? JsonResponse(*r) : ErrorResponse(r.status()));
          });
        });
      }));

  router->Add("POST", "/api/v1/allocations/{id}/signals/ack_preemption",
              WithAuth(master, ReportAllocation(), [master](HttpRequest& req, const Principal&) {
                return DeferredStatus([master, id = req.params["id"]](server::Done<Status> done) {
                  master->allocations()->AckPreemption(id, std::move(done));
                });
              }));
}

}  // namespace det::master::api
