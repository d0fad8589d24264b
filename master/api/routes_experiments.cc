// Experiments: create, list, get, lifecycle, trials, checkpoints, context.
#include <algorithm>
#include <map>
#include <utility>

#include "common/base64.h"
#include "common/clock.h"
#include "master/api/experiment_filter.h"
#include "master/api/json_views.h"
#include "master/api/list_sort.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/server/experiment_summary_service.h"
#include "master/server/workspace_service.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::HttpResponse;
using server::Principal;

namespace {

// Decodes the CLI's File list ({path, type, content(base64), mode, mtime}).
Result<server::CreateExperimentRequest> ParseCreateRequest(const json& body) {
  server::CreateExperimentRequest req;
  const json* config = Field(body, "config", "config");
  if (config == nullptr || !config->is_string()) {
    return InvalidArgument("config: required, the experiment configuration as YAML text");
  }
  req.config_yaml = config->get<std::string>();
  if (const json* a = Field(body, "activate", "activate"); a && a->is_boolean()) {
    req.activate = a->get<bool>();
  } else {
    req.activate = false;
  }
  if (const json* v = Field(body, "validateOnly", "validate_only"); v && v->is_boolean()) {
    req.validate_only = v->get<bool>();
  }
  if (const json* p = Field(body, "parentId", "parent_id"); p && p->is_number_integer()) {
    if (p->get<int64_t>() > 0) req.parent_id = p->get<int64_t>();
  }
  const json* files = Field(body, "modelDefinition", "model_definition");
  if (files == nullptr) return req;
  if (!files->is_array()) return InvalidArgument("modelDefinition: must be a list of files");
  for (size_t i = 0; i < files->size(); ++i) {
    const json& f = (*files)[i];
    std::string where = "modelDefinition[" + std::to_string(i) + "]";
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string()) {
      return InvalidArgument(where + ".path: required string");
    }
    ArchiveEntry e;
    e.path = f["path"].get<std::string>();
    if (!e.path.empty() && e.path[0] == '/') {
      return InvalidArgument(where + ".path: absolute paths are not allowed (got '" + e.path +
                             "'); a context path is relative to the context directory");
    }
    if (!IsSafeRelativePath(e.path)) {
      return InvalidArgument(where + ".path: must be relative without '..' (got '" + e.path + "')");
    }
    // Tar type flags as Determined's v1File carries them: '0' (48) or NUL a regular file, '5'
    // (53) a directory. Links and special files are refused: the agent would unpack them.
    const json* type_field = Field(f, "type", "type");
    int64_t type = 48;
    if (type_field != nullptr && !type_field->is_null()) {
      if (!type_field->is_number_integer()) {
        return InvalidArgument(where + ".type: must be a tar type flag number (got " +
                               type_field->dump() + ")");
      }
      type = type_field->get<int64_t>();
    }
    if (type != 0 && type != 48 && type != 53) {
      static const std::map<int64_t, const char*> kNames = {{49, "a hard link"},
                                                            {50, "a symbolic link"},
                                                            {51, "a character device"},
                                                            {52, "a block device"},
                                                            {54, "a fifo"}};
      auto name = kNames.find(type);
      return InvalidArgument(where + " ('" + e.path + "'): type " + std::to_string(type) +
                             (name != kNames.end() ? std::string(" (") + name->second + ")" : "") +
                             " is not allowed; a context holds regular files (48) and "
                             "directories (53) only");
    }
    e.is_dir = type == 53;
    if (const json* m = Field(f, "mode", "mode"); m && m->is_number_integer()) {
      // Permission bits only: no setuid, setgid or sticky bit reaches the agent.
      e.mode = static_cast<uint32_t>(m->get<int64_t>()) & 0777;
    } else {
      e.mode = e.is_dir ? 0755 : 0644;
    }
    if (const json* t = Field(f, "mtime", "mtime")) {
      e.mtime = t->is_string() ? std::atoll(t->get<std::string>().c_str())
                               : (t->is_number_integer() ? t->get<int64_t>() : 0);
    }
    if (!e.is_dir) {
      std::string content = f.value("content", "");
      Result<std::string> bytes = Base64Decode(content);
      if (!bytes.ok()) return InvalidArgument(where + ".content: " + bytes.status().message());
      e.content = std::move(bytes).value();
      req.content_bytes += static_cast<int64_t>(e.content.size());
    }
    req.files.push_back(std::move(e));
  }
  return req;
}

// Fills `req`'s files with the model definition stored for its parent experiment.
Status UseParentContext(server::Master* master, server::CreateExperimentRequest* req) {
  int64_t parent = *req->parent_id;
  if (Status st = master->experiments()->GetExperiment(parent).status(); !st.ok()) {
    return st.code() == StatusCode::kNotFound
               ? NotFound("parentId: experiment " + std::to_string(parent) + " not found")
               : st;
  }
  DET_ASSIGN_OR_RETURN(std::string tgz, master->experiments()->GetModelDefinition(parent));
  if (tgz.empty()) return Status::Ok();
  DET_ASSIGN_OR_RETURN(req->files, ReadArchive(tgz));
  req->content_bytes = 0;
  for (const ArchiveEntry& e : req->files) {
    req->content_bytes += static_cast<int64_t>(e.content.size());
  }
  return Status::Ok();
}

// The list's checkpoint and best-validation columns (Determined's Experiment fields).
Status AddSummaries(server::Master* master, const std::vector<server::ExperimentView>& views,
                    json* exps) {
  std::vector<server::ExperimentSummaryKey> keys;
  for (const auto& v : views) {
    const std::string& s = v.presented_state;
    bool finished = s == "STATE_COMPLETED" || s == "STATE_CANCELED" || s == "STATE_ERROR";
    keys.push_back({v.row.id, finished ? v.row.end_time : std::nullopt});
  }
  DET_ASSIGN_OR_RETURN(auto summaries, master->summaries()->Summaries(keys));
  for (json& e : *exps) {
    auto it = summaries.find(e["id"].get<int64_t>());
    if (it == summaries.end()) continue;
    const store::ExperimentSummaryRow& s = it->second;
    e["checkpointCount"] = s.checkpoint_count;
    e["checkpointSize"] = std::to_string(s.checkpoint_size);  // int64 is a string in JSON
    e["bestTrialSearcherMetric"] = s.best_metric ? json(*s.best_metric) : json(nullptr);
    e["bestTrialId"] = s.best_trial_id ? json(*s.best_trial_id) : json(nullptr);
  }
  return Status::Ok();
}

// A trial's JSON with its parsed summary and hyperparameters moved into it, not copied: at 100
// trials a page, building the JSON costs more than the store reads (the same bytes as TrialJson).
json TrialJsonMovingFields(server::TrialView& v) {
  json summary = std::exchange(v.summary_metrics, json::object());
  json hparams = std::exchange(v.row.hparams, json());
  json out = TrialJson(v);
  out["summaryMetrics"] = std::move(summary);
  out["hparams"] = std::move(hparams);
  return out;
}

}  // namespace

HttpResponse ListExperimentsResponse(server::Master* master, HttpRequest& req,
                                     std::optional<int64_t> project_id) {
  Result<int64_t> offset = QueryInt(req, "offset", 0);
  if (!offset.ok()) return ErrorResponse(offset.status());
  Result<int64_t> limit = QueryInt(req, "limit", 0);
  if (!limit.ok()) return ErrorResponse(limit.status());
  Result<store::ExperimentFilter> filter = ParseExperimentFilter(req);
  if (!filter.ok()) return ErrorResponse(filter.status());
  int64_t total = 0;
  // One project: every match is read, filtered by its project, then paged here.
  store::Page page = project_id ? store::Page{} : store::Page{*offset, *limit};
  auto list = master->experiments()->ListExperiments(*filter, page, &total);
  if (!list.ok()) return ErrorResponse(list.status());
  if (project_id) {
    std::vector<server::ExperimentView> in_project;
    for (auto& v : *list) {
      if (master->workspaces()->ProjectOf(v.row.id) == *project_id) {
        in_project.push_back(std::move(v));
      }
    }
    total = static_cast<int64_t>(in_project.size());
    list->clear();
    for (int64_t i = *offset; i < total && (*limit <= 0 || i < *offset + *limit); ++i) {
      list->push_back(std::move(in_project[i]));
    }
  }
  json exps = json::array();
  for (const auto& v : *list) exps.push_back(PlacedExperimentJson(master, v));
  if (Status st = AddSummaries(master, *list, &exps); !st.ok()) return ErrorResponse(st);
  return JsonResponse(
      {{"experiments", exps},
       {"pagination", PaginationJson(*offset, *limit, static_cast<int64_t>(list->size()), total)}});
}

void RegisterExperimentRoutes(server::Router* router, server::Master* master) {
  router->Add(
      "POST", "/api/v1/experiments",
      WithAuth(master, Create(), [master](HttpRequest& req, const Principal& who) {
        Result<json> body = ParseBody(req);
        if (!body.ok()) return ErrorResponse(body.status());
        if (const json* u = Field(*body, "unmanaged", "unmanaged"); u && *u == true) {
          return CreateUnmanagedExperimentResponse(master, *body, who, std::nullopt);
        }
        auto parsed = ParseCreateRequest(*body);
        if (!parsed.ok()) return ErrorResponse(parsed.status());
        // A fork (parentId) without files runs the parent's code, as Determined's does.
        if (parsed->parent_id && parsed->files.empty()) {
          Status st = UseParentContext(master, &*parsed);
          if (!st.ok()) return ErrorResponse(st);
        }
        // `template`: Determined merges the named config template under the config.
        if (const json* t = Field(*body, "template", "template"); t != nullptr) {
          if (!t->is_string()) {
            return ErrorResponse(InvalidArgument("template: must be a template name"));
          }
          if (!t->get<std::string>().empty()) {
            auto merged = ApplyTemplateToConfig(master, t->get<std::string>(), parsed->config_yaml);
            if (!merged.ok()) return ErrorResponse(merged.status());
            parsed->config_yaml = std::move(merged).value();
          }
        }
        // `projectId`: the project must exist and not be archived (routes_workspaces.cc).
        int64_t project_id = 1;
        if (const json* p = Field(*body, "projectId", "project_id"); p && !p->is_null()) {
          if (!p->is_number_integer() || p->get<int64_t>() < 0) {
            return ErrorResponse(InvalidArgument("projectId: must be a project id"));
          }
          if (p->get<int64_t>() > 0) project_id = p->get<int64_t>();
        }
        if (project_id != 1) {
          auto project = master->workspaces()->GetProject(project_id);
          if (!project.ok()) return ErrorResponse(project.status());
          if (project->archived) {
            return ErrorResponse(FailedPrecondition("project '" + project->name + "' is archived"));
          }
          parsed->workspace_id = project->workspace_id;
          parsed->project_id = project_id;
        }
        auto created = master->experiments()->CreateExperiment(*parsed, who);
        if (!created.ok()) return ErrorResponse(created.status());
        // A validate-only create answers Determined's empty experiment: every field its
        // clients' decoders require, at its zero value.
        json exp = {{"archived", false},
                    {"config", json::object()},
                    {"id", 0},
                    {"jobId", ""},
                    {"name", ""},
                    {"numTrials", 0},
                    {"originalConfig", ""},
                    {"projectId", 0},
                    {"projectOwnerId", 0},
                    {"searcherType", ""},
                    {"startTime", "1970-01-01T00:00:00Z"},
                    {"state", "STATE_UNSPECIFIED"},
                    {"username", ""}};
        if (created->experiment) {
          auto view = master->experiments()->GetExperiment(created->experiment->id);
          if (!view.ok()) return ErrorResponse(view.status());
          exp = PlacedExperimentJson(master, *view);
        }
        return JsonResponse(
            {{"experiment", exp}, {"config", ShownConfig(master, created->config)}, {"warnings", json::array()}});
      }));

  router->Add("GET", "/api/v1/experiments",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                Result<int64_t> project = QueryInt(req, "projectId", 0);
                if (!project.ok()) return ErrorResponse(project.status());
                return ListExperimentsResponse(
                    master, req, *project > 0 ? std::optional<int64_t>(*project) : std::nullopt);
              }));

  router->Add("GET", "/api/v1/experiments/{id}",
              WithAuth(master, ReadExperiment(), [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                auto v = master->experiments()->GetExperiment(*id);
                if (!v.ok()) return ErrorResponse(v.status());
                std::string job_state =
                    v->presented_state == "STATE_RUNNING" ? "STATE_SCHEDULED" : "STATE_QUEUED";
                // Determined's GetExperiment lists the trial ids (its list route leaves them out):
                // the web UI asks for their series with them before the trial list is in.
                int64_t total = 0;
                auto trial_ids = master->series()->TrialIdsPage(*id, store::Page{}, false, &total);
                if (!trial_ids.ok()) return ErrorResponse(trial_ids.status());
                json experiment = PlacedExperimentJson(master, *v);
                experiment["trialIds"] = *trial_ids;
                return JsonResponse({{"experiment", std::move(experiment)},
                                     {"jobSummary", {{"state", job_state}, {"jobsAhead", 0}}},
                                     {"config", ShownConfig(master, v->row.config)}});
              }));

  // Lifecycle changes are decided on the runtime loop and answered once stored; the request
  // holds no thread meanwhile.
  router->Add("POST", "/api/v1/experiments/{id}/activate",
              DeferredIdAction(master, [master](int64_t id, server::Done<Status> done) {
                if (Status st = RefuseIfUnmanaged(master, id, "activated"); !st.ok()) {
                  return done(st);
                }
                master->experiments()->ActivateExperiment(id, std::move(done));
              }));
  router->Add("POST", "/api/v1/experiments/{id}/pause",
              DeferredIdAction(master, [master](int64_t id, server::Done<Status> done) {
                if (Status st = RefuseIfUnmanaged(master, id, "paused"); !st.ok()) return done(st);
                master->experiments()->PauseExperiment(id, std::move(done));
              }));
  router->Add("POST", "/api/v1/experiments/{id}/cancel",
              DeferredIdAction(master, [master](int64_t id, server::Done<Status> done) {
                master->experiments()->CancelExperiment(id, std::move(done));
              }));
  router->Add("POST", "/api/v1/experiments/{id}/kill",
              DeferredIdAction(master, [master](int64_t id, server::Done<Status> done) {
                master->experiments()->KillExperiment(id, std::move(done));
              }));
  router->Add("POST", "/api/v1/experiments/{id}/archive",
              DeferredIdAction(master, [master](int64_t id, server::Done<Status> done) {
                master->experiments()->SetArchived(id, true, std::move(done));
              }));
  router->Add("POST", "/api/v1/experiments/{id}/unarchive",
              DeferredIdAction(master, [master](int64_t id, server::Done<Status> done) {
                master->experiments()->SetArchived(id, false, std::move(done));
              }));

  router->Add(
      "GET", "/api/v1/experiments/{id}/trials",
      WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
        Result<int64_t> id = PathId(req, "id");
        if (!id.ok()) return ErrorResponse(id.status());
        // Determined's default order (by id) with no state filter is paged in the store
        // (an experiment may hold 10,000s of trials); other sorts and filters read all.
        const std::string sort_by = req.Query("sortBy");
        if (req.QueryAll("states").empty() &&
            (sort_by.empty() || sort_by == "SORT_BY_UNSPECIFIED" || sort_by == "0" ||
             sort_by == "SORT_BY_ID" || sort_by == "1")) {
          // Paged in the store: an experiment may hold 10,000s of trials.
          Result<int64_t> offset = QueryInt(req, "offset", 0);
          if (!offset.ok()) return ErrorResponse(offset.status());
          Result<int64_t> limit = QueryInt(req, "limit", 0);
          if (!limit.ok()) return ErrorResponse(limit.status());
          Result<std::optional<bool>> order = ParseOrderBy(req.Query("orderBy"));
          if (!order.ok()) return ErrorResponse(order.status());
          int64_t total = 0;
          auto ids = master->series()->TrialIdsPage(
              *id, store::Page{*offset, std::max<int64_t>(*limit, 0)}, order->value_or(false),
              &total);
          if (!ids.ok()) return ErrorResponse(ids.status());
          // The page's views read together: a few statements, not five per trial.
          auto views = master->experiments()->GetTrials(*ids);
          if (!views.ok()) return ErrorResponse(views.status());
          json trials = json::array();
          for (auto& t : *views) trials.push_back(TrialJsonMovingFields(t));
          int64_t count = static_cast<int64_t>(trials.size());
          return JsonResponse({{"trials", std::move(trials)},
                               {"pagination", PaginationJson(*offset, *limit, count, total)}});
        }
        auto trials = master->experiments()->ListTrials(*id);
        if (!trials.ok()) return ErrorResponse(trials.status());
        std::vector<std::string> states = req.QueryAll("states");
        json all = json::array();
        for (auto& t : *trials) {
          json j = TrialJsonMovingFields(t);
          if (!states.empty() && std::find(states.begin(), states.end(),
                                           j["state"].get<std::string>()) == states.end()) {
            continue;
          }
          all.push_back(std::move(j));
        }
        // compat11: Determined's sortBy / orderBy (list_sort.h).
        auto exp = master->experiments()->GetExperiment(*id);
        if (!exp.ok()) return ErrorResponse(exp.status());
        const json& searcher = exp->row.config.value("searcher", json::object());
        Status sorted = SortTrials(all, req.Query("sortBy"), req.Query("orderBy"),
                                   searcher.value("metric", ""), SystemClock().NowMicros());
        if (!sorted.ok()) return ErrorResponse(sorted);
        auto page = Paginate(req, all, "trials");
        return page.ok() ? JsonResponse(*page) : ErrorResponse(page.status());
      }));

  router->Add("GET", "/api/v1/experiments/{id}/searcher/best_searcher_validation_metric",
              WithAuth(master, ReadExperiment(), [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                auto best = master->experiments()->BestValidationMetric(*id);
                if (!best.ok()) return ErrorResponse(best.status());
                if (!best->has_value()) {
                  return ErrorResponse(
                      NotFound("no validation metrics for experiment " + std::to_string(*id)));
                }
                return JsonResponse({{"metric", **best}});
              }));

  router->Add("GET", "/api/v1/experiments/{id}/model_def",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                if (auto e = master->experiments()->GetExperiment(*id); !e.ok())
                  return ErrorResponse(e.status());
                auto tgz = master->experiments()->GetModelDefinition(*id);
                if (!tgz.ok()) return ErrorResponse(tgz.status());
                return JsonResponse({{"b64Tgz", Base64Encode(*tgz)}});
              }));

  router->Add(
      "GET", "/api/v1/tasks/{taskId}/context_directory",
      WithAuth(master, Access{Auth::kUserOrAllocation, core::Action::kRead, Target::kHandler},
               [master](HttpRequest& req, const Principal& who) {
                 // An allocation (id "<task id>.<run>") reads only its own task's context.
                 const std::string& task = req.params["taskId"];
                 if (who.is_allocation && who.allocation_id.rfind(task + ".", 0) != 0) {
                   return ErrorResponse(PermissionDenied(
                       "allocation " + who.allocation_id + " may not read the context of task " +
                       task + ": allocation tokens only reach their own trial"));
                 }
                 auto tgz = master->experiments()->GetContextForTask(req.params["taskId"]);
                 if (!tgz.ok()) return ErrorResponse(tgz.status());
                 return JsonResponse({{"b64Tgz", Base64Encode(*tgz)}});
               }));
}

}  // namespace det::master::api
