// Determined's bulk experiment actions: POST /api/v1/projects/{id}/experiments/
// {activate,pause,cancel,kill,archive,unarchive,move} and DELETE .../experiments/delete, each
// {experimentIds | filters, projectId} -> {results: [{id, error}]}. Every experiment is
// changed only as its single route would change it, for its owner or an admin; the others get
// the refusal as their result and are left as they are. Project 0 means every project.
#include "common/whole_int64.h"
#include "master/api/bulk_experiments.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/server/experiment_service.h"
#include "master/server/workspace_service.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::HttpResponse;
using server::Principal;

Status RefuseIfUnmanaged(server::Master* master, int64_t experiment_id, const char* action);

namespace {

// Runs `action` on each id in turn, each after the one before has answered (a decision each,
// on the runtime loop), then answers with every result.
struct BulkRun {
  std::vector<int64_t> ids;
  size_t next = 0;
  json results = json::array();
  std::function<void(int64_t, server::Done<Status>)> action;
  server::Responder respond;
};

void Step(const std::shared_ptr<BulkRun>& run) {
  if (run->next == run->ids.size()) {
    run->respond(JsonResponse({{"results", std::move(run->results)}}));
    return;
  }
  int64_t id = run->ids[run->next++];
  run->action(id, [run, id](Status st) {
    run->results.push_back({{"id", id}, {"error", st.ok() ? "" : st.message()}});
    Step(run);
  });
}

// What the single route does to one experiment.
std::function<void(int64_t, server::Done<Status>)> ActionFor(server::Master* master,
                                                             BulkAction action,
                                                             int64_t destination) {
  server::ExperimentService* exps = master->experiments();
  switch (action) {
    case BulkAction::kActivate:
      return [master, exps](int64_t id, server::Done<Status> done) {
        if (Status st = RefuseIfUnmanaged(master, id, "activated"); !st.ok()) return done(st);
        exps->ActivateExperiment(id, std::move(done));
      };
    case BulkAction::kPause:
      return [master, exps](int64_t id, server::Done<Status> done) {
        if (Status st = RefuseIfUnmanaged(master, id, "paused"); !st.ok()) return done(st);
        exps->PauseExperiment(id, std::move(done));
      };
    case BulkAction::kCancel:
      return [exps](int64_t id, server::Done<Status> done) {
        exps->CancelExperiment(id, std::move(done));
      };
    case BulkAction::kKill:
      return [exps](int64_t id, server::Done<Status> done) {
        exps->KillExperiment(id, std::move(done));
      };
    case BulkAction::kArchive:
    case BulkAction::kUnarchive:
      return [exps, archived = action == BulkAction::kArchive](int64_t id,
                                                               server::Done<Status> done) {
        exps->SetArchived(id, archived, std::move(done));
      };
    case BulkAction::kDelete:
      return [exps](int64_t id, server::Done<Status> done) {
        exps->DeleteExperiment(id, std::move(done));
      };
    case BulkAction::kMove:
      return [master, destination](int64_t id, server::Done<Status> done) {
        done(master->workspaces()->MoveExperiment(id, destination));
      };
  }
  return nullptr;
}

HttpResponse HandleBulk(server::Master* master, BulkAction action, HttpRequest& req,
                        const Principal& who) {
  auto param = req.params.find("id");
  std::optional<int64_t> project;
  if (param != req.params.end()) project = WholeInt64(param->second);
  if (!project || *project < 0) {
    return ErrorResponse(InvalidArgument("projectId: must be a project id, or 0 for every project (got '" +
                                         (param == req.params.end() ? "" : param->second) + "')"));
  }
  Result<json> body = ParseBody(req);
  if (!body.ok()) return ErrorResponse(body.status());
  Result<BulkRequest> r = ParseBulkRequest(*body, action);
  if (!r.ok()) return ErrorResponse(r.status());

  // Filters select what they match (ids are then ignored); experiments the caller may not
  // change are left out of a filter's selection, and named in a list of ids with why.
  std::vector<int64_t> candidates = r->ids;
  if (r->filter) {
    int64_t total = 0;
    auto list = master->experiments()->ListExperiments(*r->filter, store::Page{}, &total);
    if (!list.ok()) return ErrorResponse(list.status());
    candidates.clear();
    for (const server::ExperimentView& v : *list) candidates.push_back(v.row.id);
  }
  const bool listed = !r->filter;
  const bool archived_ok = action == BulkAction::kArchive || action == BulkAction::kUnarchive;
  auto run = std::make_shared<BulkRun>();
  for (int64_t id : candidates) {
    auto refuse = [&](Status why) {
      if (listed) run->results.push_back({{"id", id}, {"error", why.message()}});
    };
    auto view = master->experiments()->GetExperiment(id);
    int64_t in_project = view.ok() ? master->workspaces()->ProjectOf(id) : 0;
    if (!view.ok() || (*project != 0 && in_project != *project) ||
        (r->filter_project != 0 && in_project != r->filter_project)) {
      refuse(NotFound("experiment " + std::to_string(id) + " not found" +
                      (*project != 0 ? " in project " + std::to_string(*project) : "")));
      continue;
    }
    if (Status st = AuthorizeOn(master, who, ExperimentOwner(), std::to_string(id)); !st.ok()) {
      refuse(st);
      continue;
    }
    if (view->row.archived && !archived_ok) {
      refuse(FailedPrecondition("experiment " + std::to_string(id) + " is archived"));
      continue;
    }
    run->ids.push_back(id);
  }
  run->action = ActionFor(master, action, r->destination_project);
  return HttpResponse::Deferred([run](server::Responder respond) {
    run->respond = std::move(respond);
    Step(run);
  });
}

}  // namespace

void RegisterExperimentBulkRoutes(server::Router* router, server::Master* master) {
  for (BulkAction action : {BulkAction::kActivate, BulkAction::kPause, BulkAction::kCancel,
                            BulkAction::kKill, BulkAction::kArchive, BulkAction::kUnarchive,
                            BulkAction::kDelete, BulkAction::kMove}) {
    const char* method = action == BulkAction::kDelete ? "DELETE" : "POST";
    router->Add(method,
                std::string("/api/v1/projects/{id}/experiments/") + BulkActionName(action),
                WithAuth(master, Checked(core::Action::kModify),
                         [master, action](HttpRequest& req, const Principal& who) {
                           return HandleBulk(master, action, req, who);
                         }));
  }
}

}  // namespace det::master::api
