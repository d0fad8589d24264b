// Unmanaged (core_v2) experiments and trials: a script outside the cluster creates its
// experiment and trial, starts the trial, heartbeats and reports its state. Metrics, checkpoints
// and logs then go through the ordinary trial routes.
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

bool IsTrue(const json* v) { return v != nullptr && v->is_boolean() && v->get<bool>(); }

Result<int64_t> PositiveInt(const json& obj, const char* camel, const char* snake) {
  const json* f = Field(obj, camel, snake);
  if (f == nullptr) return InvalidArgument(std::string(camel) + ": required");
  int64_t v = 0;
  if (f->is_number_integer()) {
    v = f->get<int64_t>();
  } else if (f->is_string()) {
    v = WholeInt64(f->get<std::string>()).value_or(0);
  }
  if (v <= 0) {
    return InvalidArgument(std::string(camel) + ": must be a positive integer (got " + f->dump() +
                           ")");
  }
  return v;
}

HttpResponse TrialResponse(server::Master* master, int64_t trial_id) {
  auto view = master->experiments()->GetTrial(trial_id);
  if (!view.ok()) return ErrorResponse(view.status());
  return JsonResponse({{"trial", TrialJson(*view)}});
}

// The body of POST /api/v1/trials, or the createTrialRequest of PUT /api/v1/trials.
Result<server::UnmanagedService::CreateTrialRequest> ParseCreateTrial(const json& body) {
  if (!IsTrue(Field(body, "unmanaged", "unmanaged"))) {
    return InvalidArgument("unmanaged: only unmanaged trials can be created (set unmanaged: true)");
  }
  server::UnmanagedService::CreateTrialRequest req;
  DET_ASSIGN_OR_RETURN(req.experiment_id, PositiveInt(body, "experimentId", "experiment_id"));
  if (const json* h = Field(body, "hparams", "hparams"); h != nullptr && !h->is_null()) {
    if (!h->is_object())
      return InvalidArgument("hparams: must be an object (got " + h->dump() + ")");
    req.hparams = *h;
  }
  return req;
}

HttpResponse CreateTrial(server::Master* master, const Principal& who, const json& body,
                         std::optional<std::string> external_id) {
  Result<server::UnmanagedService::CreateTrialRequest> req = ParseCreateTrial(body);
  if (!req.ok()) return ErrorResponse(req.status());
  // A trial is added to an experiment by its owner or an admin.
  Status allowed = AuthorizeOn(master, who, ExperimentOwner(), std::to_string(req->experiment_id));
  if (!allowed.ok()) return ErrorResponse(allowed);
  req->external_id = std::move(external_id);
  Result<int64_t> id = master->unmanaged()->CreateTrial(*req);
  if (!id.ok()) return ErrorResponse(id.status());
  return TrialResponse(master, *id);
}

}  // namespace

HttpResponse CreateUnmanagedExperimentResponse(server::Master* master, const json& body,
                                               const Principal& who,
                                               const std::optional<std::string>& external_id) {
  if (!IsTrue(Field(body, "unmanaged", "unmanaged"))) {
    return ErrorResponse(InvalidArgument(
        "unmanaged: only unmanaged experiments can be put by external id (set unmanaged: true)"));
  }
  const json* config = Field(body, "config", "config");
  if (config == nullptr || !config->is_string()) {
    return ErrorResponse(
        InvalidArgument("config: required, the experiment configuration as YAML text"));
  }
  if (const json* p = Field(body, "parentId", "parent_id");
      p && p->is_number_integer() && p->get<int64_t>() != 0) {
    return ErrorResponse(InvalidArgument("parentId: an unmanaged experiment cannot be forked"));
  }
  if (const json* files = Field(body, "modelDefinition", "model_definition");
      files && !(files->is_array() && files->empty())) {
    return ErrorResponse(InvalidArgument(
        "modelDefinition: an unmanaged experiment runs outside the cluster and takes no model "
        "definition"));
  }
  server::UnmanagedService::CreateExperimentRequest req;
  req.config_yaml = config->get<std::string>();
  req.external_id = external_id;
  req.validate_only = IsTrue(Field(body, "validateOnly", "validate_only"));
  auto created = master->unmanaged()->CreateExperiment(req, who.user_id);
  if (!created.ok()) return ErrorResponse(created.status());
  json exp = json::object();
  if (created->id) {
    auto view = master->experiments()->GetExperiment(*created->id);
    if (!view.ok()) return ErrorResponse(view.status());
    exp = ExperimentJson(*view, MaskedTaskDefaults(master));
  }
  return JsonResponse(
      {{"experiment", exp}, {"config", ShownConfig(master, created->config)}, {"warnings", json::array()}});
}

Status RefuseIfUnmanaged(server::Master* master, int64_t experiment_id, const char* action) {
  if (!master->unmanaged()->FindExperiment(experiment_id)) return Status::Ok();
  return FailedPrecondition("experiment " + std::to_string(experiment_id) +
                            " is unmanaged: its own script runs it, so it cannot be " + action +
                            " here");
}

void RegisterUnmanagedRoutes(server::Router* router, server::Master* master) {
  router->Add("PUT", "/api/v1/experiments/by-external-id/{externalExperimentId}",
              WithAuth(master, Create(), [master](HttpRequest& req, const Principal& who) {
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                return CreateUnmanagedExperimentResponse(master, *body, who,
                                                         req.params["externalExperimentId"]);
              }));

  router->Add("POST", "/api/v1/trials",
              WithAuth(master, Checked(core::Action::kModify),
                       [master](HttpRequest& req, const Principal& who) {
                         Result<json> body = ParseBody(req);
                         if (!body.ok()) return ErrorResponse(body.status());
                         return CreateTrial(master, who, *body, std::nullopt);
                       }));

  router->Add(
      "PUT", "/api/v1/trials",
      WithAuth(master, Checked(core::Action::kModify),
               [master](HttpRequest& req, const Principal& who) {
                 Result<json> body = ParseBody(req);
                 if (!body.ok()) return ErrorResponse(body.status());
                 const json* inner = Field(*body, "createTrialRequest", "create_trial_request");
                 if (inner == nullptr || !inner->is_object()) {
                   return ErrorResponse(InvalidArgument("createTrialRequest: required object"));
                 }
                 const json* ext = Field(*body, "externalTrialId", "external_trial_id");
                 if (ext == nullptr || !ext->is_string() || ext->get<std::string>().empty()) {
                   return ErrorResponse(InvalidArgument("externalTrialId: required string"));
                 }
                 return CreateTrial(master, who, *inner, ext->get<std::string>());
               }));

  router->Add("POST", "/api/v1/trials/{id}/start",
              WithAuth(master, OwnTrialReport(), [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                bool resume = IsTrue(Field(*body, "resume", "resume"));
                auto started = master->unmanaged()->StartTrial(*id, resume);
                if (!started.ok()) return ErrorResponse(started.status());
                json out = {{"trialRunId", started->trial_run_id},
                            {"stepsCompleted", started->steps_completed}};
                if (started->latest_checkpoint)
                  out["latestCheckpoint"] = *started->latest_checkpoint;
                return JsonResponse(out);
              }));

  // Determined's detached log shipper posts here (a list of its TaskLog model objects, snake
  // case); Determined leaves the path unauthenticated, this master wants the caller's token.
  router->Add(
      "POST", "/task-logs",
      WithAuth(master, TrialChecked(), [master](HttpRequest& req, const Principal& who) {
        Result<json> body = ParseBody(req);
        if (!body.ok()) return ErrorResponse(body.status());
        if (!body->is_array()) {
          return ErrorResponse(InvalidArgument("task logs: the body must be a list of task logs"));
        }
        std::vector<store::TaskLogRow> rows;
        for (size_t i = 0; i < body->size(); ++i) {
          const json& l = (*body)[i];
          std::string where = "task logs[" + std::to_string(i) + "]";
          if (!l.is_object() || !l.contains("task_id") || !l["task_id"].is_string()) {
            return ErrorResponse(InvalidArgument(where + ".task_id: required string"));
          }
          Result<store::TaskLogRow> r = TaskLogRowOf(master, who, l);
          if (!r.ok()) return ErrorResponse(r.status());
          rows.push_back(std::move(r).value());
        }
        Status st = master->experiments()->AddTaskLogs(who, std::move(rows));
        return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
      }));

  // Determined's core.init (managed and detached) registers the run's checkpoint storage here
  // and gets a storage backend id for its checkpoint reports. Checkpoints here carry their
  // experiment's storage instead, so this only checks the run and answers no storageId.
  router->Add(
      "POST", "/api/v1/runs/start",
      WithAuth(master, TrialChecked(), [master](HttpRequest& req, const Principal& who) {
        Result<json> body = ParseBody(req);
        if (!body.ok()) return ErrorResponse(body.status());
        Result<int64_t> run = PositiveInt(*body, "runId", "run_id");
        if (!run.ok()) return ErrorResponse(run.status());
        if (Status st = AuthorizeOn(master, who, ReportTrial(), std::to_string(*run)); !st.ok()) {
          return ErrorResponse(st);
        }
        if (const json* cs = Field(*body, "checkpointStorage", "checkpoint_storage");
            cs && !cs->is_object()) {
          return ErrorResponse(
              InvalidArgument("checkpointStorage: must be an object (got " + cs->dump() + ")"));
        }
        auto trial = master->experiments()->GetTrial(*run);
        if (!trial.ok()) return ErrorResponse(trial.status());
        return JsonResponse(json::object());
      }));

  router->Add("PATCH", "/api/v1/trials/{id}",
              WithAuth(master, OwnTrialReport(), [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                std::optional<std::string> state;
                if (const json* s = Field(*body, "state", "state"); s != nullptr) {
                  if (!s->is_string()) {
                    return ErrorResponse(InvalidArgument("state: must be a trial state name (got " +
                                                         s->dump() + ")"));
                  }
                  state = s->get<std::string>();
                }
                Status st = master->unmanaged()->PatchTrial(*id, state);
                if (!st.ok()) return ErrorResponse(st);
                return TrialResponse(master, *id);
              }));
}

}  // namespace det::master::api
