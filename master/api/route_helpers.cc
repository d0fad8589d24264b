#include "master/api/route_helpers.h"


#include <spdlog/spdlog.h>

#include <charconv>
#include <utility>
#include <vector>

#include "common/json_parse.h"
#include "common/whole_int64.h"
#include "master/api/json_views.h"
#include "master/core/uuid_check.h"
#include "master/server/task_service.h"
#include "master/server/workspace_service.h"

namespace det::master::api {

using nlohmann::json;

namespace {

std::string BearerToken(const std::string& header) {
  const std::string prefix = "Bearer ";
  if (header.rfind(prefix, 0) == 0) return header.substr(prefix.size());
  return header;
}

std::string CookieToken(const std::string& cookies) {
  size_t pos = cookies.find("auth=");
  if (pos == std::string::npos) return "";
  size_t end = cookies.find(';', pos);
  return cookies.substr(pos + 5, end == std::string::npos ? std::string::npos : end - pos - 5);
}

// Free-form objects whose nulls are values (a user's metadata, reported metrics), not unset fields.
bool IsFreeFormKey(const std::string& key) {
  return key == "metadata" || key == "metrics" || key == "hparams" || key == "settings";
}

server::HttpResponse Guarded(const std::function<server::HttpResponse()>& fn) {
  try {
    return fn();
  } catch (const json::exception& e) {
    return ErrorResponse(InvalidArgument(std::string("malformed request: ") + e.what()));
  }
}

}  // namespace

namespace {

const char* TargetName(Target t) {
  switch (t) {
    case Target::kNone:
      return "";
    case Target::kExperiment:
      return "experiment";
    case Target::kTrial:
      return "trial";
    case Target::kCheckpoint:
      return "checkpoint";
    case Target::kAllocation:
      return "allocation";
    case Target::kWorkspace:
      return "workspace";
    case Target::kProject:
      return "project";
    case Target::kHandler:
      return "handler";
  }
  return "";
}

Result<server::Principal> Authenticate(server::Master* master, Auth auth,
                                       const server::HttpRequest& req) {
  std::string alloc_token = req.Header("grpc-metadata-x-allocation-token");
  if (alloc_token.empty()) alloc_token = req.Header("x-allocation-token");
  std::string user_token = BearerToken(req.Header("authorization"));
  if (user_token.empty()) user_token = CookieToken(req.Header("cookie"));
  if (!alloc_token.empty() && auth == Auth::kUserOrAllocation) {
    return master->auth()->AuthenticateAllocationToken(BearerToken(alloc_token));
  }
  if (!user_token.empty()) return master->auth()->AuthenticateUserToken(user_token);
  if (!alloc_token.empty()) {
    return PermissionDenied("allocation tokens may not call " + req.method + " " + req.path +
                            ": they only reach their own trial's routes");
  }
  return Unauthenticated("token missing");
}

core::Subject SubjectOf(const server::Principal& who) {
  core::Subject s;
  s.user_id = who.user_id;
  s.username = who.username;
  s.admin = who.admin;
  s.is_allocation = who.is_allocation;
  s.allocation_id = who.allocation_id;
  s.trial_id = who.trial_id;
  return s;
}

// The resource `access` names in `req`, with its owner. NotFound passes through to the caller.
Result<int64_t> ParseId(const std::string& key, const char* name) {
  std::optional<int64_t> v = WholeInt64(key);
  if (!v || *v <= 0) {
    return InvalidArgument(std::string(name) + ": must be a positive integer (got '" + key + "')");
  }
  return *v;
}

Result<core::Resource> ResolveResource(server::Master* master, const Access& access,
                                       const server::Principal& who, const std::string& key) {
  core::Resource r;
  if (access.target == Target::kNone || access.target == Target::kHandler) {
    r.kind = key;  // the request ("POST /api/v1/agents/a1/disable"), for the message
    return r;
  }
  r.kind = std::string(TargetName(access.target)) + " " + key;
  const bool owner_needed =
      !who.is_allocation && !who.admin && access.action != core::Action::kRead;
  server::Ownership o;
  switch (access.target) {
    case Target::kExperiment: {
      DET_ASSIGN_OR_RETURN(int64_t id, ParseId(key, access.param));
      r.experiment_id = id;
      if (owner_needed) {
        DET_ASSIGN_OR_RETURN(o, master->ownership()->OfExperiment(id));
        r.owner_id = o.owner_id;
      }
      return r;
    }
    case Target::kTrial: {
      DET_ASSIGN_OR_RETURN(int64_t id, ParseId(key, access.param));
      r.trial_id = id;
      if (owner_needed) {
        DET_ASSIGN_OR_RETURN(o, master->ownership()->OfTrial(id));
        r.owner_id = o.owner_id;
        r.experiment_id = o.experiment_id;
      }
      return r;
    }
    case Target::kCheckpoint: {
      // A uuid names a directory on storage: never look up or join anything else.
      DET_RETURN_IF_ERROR(core::CheckCheckpointUuid(key, access.param ? access.param : "uuid"));
      r.readable_by_owner_trials = true;
      if (who.is_allocation || owner_needed) {
        DET_ASSIGN_OR_RETURN(o, master->ownership()->OfCheckpoint(key));
        r.owner_id = o.owner_id;
        r.trial_id = o.trial_id;
        r.experiment_id = o.experiment_id;
      }
      return r;
    }
    case Target::kAllocation: {
      r.allocation_id = key;
      if (owner_needed) {
        DET_ASSIGN_OR_RETURN(o, master->ownership()->OfAllocation(key));
        r.owner_id = o.owner_id;
      }
      return r;
    }
    case Target::kWorkspace: {
      DET_ASSIGN_OR_RETURN(int64_t id, ParseId(key, access.param));
      if (owner_needed) {
        DET_ASSIGN_OR_RETURN(store::WorkspaceRow w, master->workspaces()->GetWorkspace(id));
        r.owner_id = w.user_id;
      }
      return r;
    }
    case Target::kProject: {
      DET_ASSIGN_OR_RETURN(int64_t id, ParseId(key, access.param));
      if (owner_needed) {
        DET_ASSIGN_OR_RETURN(store::ProjectRow p, master->workspaces()->GetProject(id));
        r.owner_id = p.user_id;
      }
      return r;
    }
    case Target::kNone:
    case Target::kHandler:
      break;
  }
  return r;
}

}  // namespace

Status AuthorizeOn(server::Master* master, const server::Principal& who, const Access& access,
                   const std::string& key) {
  Result<core::Resource> what = ResolveResource(master, access, who, key);
  if (!what.ok()) {
    // An unknown id: the handler answers 404 for users; an allocation never reaches it.
    if (what.status().code() == StatusCode::kNotFound && !who.is_allocation) return Status::Ok();
    return what.status();
  }
  core::Subject subject = SubjectOf(who);
  if (who.is_allocation &&
      (access.target == Target::kExperiment || access.target == Target::kCheckpoint)) {
    // Its own experiment and owner, for the reads an allocation may make beyond its trial.
    Result<server::Ownership> mine = master->ownership()->OfTrial(who.trial_id);
    if (mine.ok()) {
      subject.experiment_id = mine->experiment_id;
      subject.owner_id = mine->owner_id;
    }
  }
  core::AccessDecision d = core::Authorize(subject, access.action, *what);
  if (d.allowed) return Status::Ok();
  return PermissionDenied(d.reason);
}

Status AuthorizeEach(server::Master* master, const server::Principal& who,
                     const std::vector<std::string>& checkpoint_uuids) {
  for (const std::string& uuid : checkpoint_uuids) {
    DET_RETURN_IF_ERROR(AuthorizeOn(master, who, OwnerOf(Target::kCheckpoint, "uuid"), uuid));
  }
  return Status::Ok();
}

Status AuthorizeTrialReport(server::Master* master, const server::Principal& who,
                            int64_t trial_id) {
  if (trial_id == 0) return Status::Ok();
  return AuthorizeOn(master, who, ReportTrial(), std::to_string(trial_id));
}

Status AuthorizeTaskReport(server::Master* master, const server::Principal& who,
                           const std::string& task_id, int64_t trial_id) {
  // ExperimentService::AddTaskLogs keeps an allocation to its own task's lines.
  if (who.is_allocation) return Status::Ok();
  if (trial_id != 0) return AuthorizeTrialReport(master, who, trial_id);
  // A command's, notebook's, shell's or TensorBoard's lines: its owner or an admin.
  if (std::optional<int64_t> owner = master->tasks()->OwnerOf(task_id)) {
    core::Resource r;
    r.kind = "task " + task_id;
    r.owner_id = *owner;
    core::AccessDecision d = core::Authorize(SubjectOf(who), core::Action::kTrialReport, r);
    return d.allowed ? Status::Ok() : PermissionDenied(d.reason);
  }
  // A managed trial's task, "<experiment id>.<request id>": its experiment's owner or an admin.
  size_t dot = task_id.find('.');
  std::string experiment = dot == std::string::npos ? "" : task_id.substr(0, dot);
  bool numeric = !experiment.empty() &&
                 experiment.find_first_not_of("0123456789") == std::string::npos &&
                 experiment.size() < 19;
  if (numeric && master->ownership()->OfExperiment(*WholeInt64(experiment)).ok()) {
    return AuthorizeOn(master, who,
                       Access{Auth::kUser, core::Action::kTrialReport, Target::kExperiment, "id"},
                       experiment);
  }
  // No task the master knows: nobody's lines to add to, but an admin's.
  if (who.admin) return Status::Ok();
  return PermissionDenied("user '" + who.username + "' may not write log lines of task '" +
                          task_id + "': the master knows no such task");
}

Status AuthorizeJob(server::Master* master, const server::Principal& who,
                    const std::string& job_id) {
  for (const server::JobView& j : master->allocations()->ListJobs()) {
    if (j.job_id != job_id || j.experiment_id == 0) continue;
    return AuthorizeOn(master, who, ExperimentOwner(), std::to_string(j.experiment_id));
  }
  // A task's job: the task's owner or an admin.
  if (std::optional<server::TaskService::JobInfo> task = master->tasks()->Job(job_id)) {
    core::Resource r;
    r.kind = "job " + job_id + " (" + task->task_id + ")";
    r.owner_id = task->owner_id;
    core::AccessDecision d = core::Authorize(SubjectOf(who), core::Action::kModify, r);
    if (!d.allowed) return PermissionDenied(d.reason);
  }
  return Status::Ok();
}

namespace {

// Whether `who` may make the request; the status names who, what and why when not.
Status Check(server::Master* master, const Access& access, const server::Principal& who,
             const server::HttpRequest& req) {
  if (access.target == Target::kHandler) {
    // The handler checks the resource the body names; an allocation token still reaches only
    // routes that take one (Authenticate refused it on user routes).
    return Status::Ok();
  }
  std::string key = req.method + " " + req.path;
  if (access.target != Target::kNone) {
    auto it = req.params.find(access.param);
    if (it == req.params.end()) return InvalidArgument(std::string(access.param) + ": missing");
    key = it->second;
  }
  return AuthorizeOn(master, who, access, key);
}

}  // namespace

std::string Access::Describe() const {
  std::string who = auth == Auth::kUserOrAllocation ? "user or allocation" : "user";
  std::string what = TargetName(target);
  std::string rule;
  switch (action) {
    case core::Action::kRead:
      rule = "read";
      break;
    case core::Action::kCreate:
      rule = "create";
      break;
    case core::Action::kModify:
      rule = "owner or admin";
      break;
    case core::Action::kEditShared:
      rule = "any user edits";
      break;
    case core::Action::kManageUsers:
      rule = "admin (users)";
      break;
    case core::Action::kManageCluster:
      rule = "admin (cluster)";
      break;
    case core::Action::kTrialReport:
      rule = "own trial, owner or admin";
      break;
  }
  std::string out = who + ": " + rule;
  if (target == Target::kHandler) return out + " (checked by the handler)";
  if (!what.empty()) out += " of " + what + " {" + param + "}";
  return out;
}

Access Read() { return Access{}; }
Access Create() { return Access{Auth::kUser, core::Action::kCreate, Target::kNone, "id"}; }
Access ReadExperiment(const char* param) {
  return Access{Auth::kUserOrAllocation, core::Action::kRead, Target::kExperiment, param};
}
Access ReadCheckpoint(const char* param) {
  return Access{Auth::kUserOrAllocation, core::Action::kRead, Target::kCheckpoint, param};
}
Access ReadTrial(const char* param) {
  return Access{Auth::kUserOrAllocation, core::Action::kRead, Target::kTrial, param};
}
Access ReportTrial(const char* param) {
  return Access{Auth::kUserOrAllocation, core::Action::kTrialReport, Target::kTrial, param};
}
Access ReportAllocation(const char* param) {
  return Access{Auth::kUserOrAllocation, core::Action::kTrialReport, Target::kAllocation, param};
}
Access OwnerOf(Target target, const char* param) {
  return Access{Auth::kUser, core::Action::kModify, target, param};
}
Access OwnTrialReport() {
  return Access{Auth::kUser, core::Action::kTrialReport, Target::kTrial, "id"};
}
Access ReportCheckpoint() {
  return Access{Auth::kUserOrAllocation, core::Action::kTrialReport, Target::kCheckpoint, "uuid"};
}
Access ExperimentOwner() { return OwnerOf(Target::kExperiment); }
Access WorkspaceOwner() { return OwnerOf(Target::kWorkspace); }
Access ProjectOwner() { return OwnerOf(Target::kProject); }
Access EditShared() { return Access{Auth::kUser, core::Action::kEditShared, Target::kNone, "id"}; }
Access Checked(core::Action action) { return CheckedInHandler(Auth::kUser, action); }
Access TrialChecked() {
  return CheckedInHandler(Auth::kUserOrAllocation, core::Action::kTrialReport);
}
Access AdminOnly(core::Action action) { return Access{Auth::kUser, action, Target::kNone, "id"}; }
Access CheckedInHandler(Auth auth, core::Action action) {
  return Access{auth, action, Target::kHandler, "id"};
}

server::HttpResponse AuthedRoute::operator()(server::HttpRequest& req) const {
  Result<server::Principal> who = Authenticate(master, access.auth, req);
  if (!who.ok()) return ErrorResponse(who.status());
  Status allowed = Check(master, access, *who, req);
  if (!allowed.ok()) return ErrorResponse(allowed);
  return Guarded([&] { return handler(req, *who); });
}

server::HttpResponse PublicRoute::operator()(server::HttpRequest& req) const {
  return Guarded([&] { return handler(req); });
}

server::Handler WithAuth(server::Master* master, Access access, AuthedHandler handler) {
  return AuthedRoute{master, access, std::move(handler)};
}

server::Handler WithAuth(server::Master* master, Auth auth, AuthedHandler handler) {
  Access access = auth == Auth::kUser ? Read() : CheckedInHandler(auth, core::Action::kTrialReport);
  return WithAuth(master, access, std::move(handler));
}

server::HttpResponse DeferredStatus(std::function<void(server::Done<Status>)> start) {
  return server::HttpResponse::Deferred([start = std::move(start)](server::Responder respond) {
    start([respond = std::move(respond)](Status st) {
      respond(st.ok() ? JsonResponse(json::object()) : ErrorResponse(st));
    });
  });
}

server::Handler DeferredIdAction(server::Master* master,
                                 std::function<void(int64_t, server::Done<Status>)> action,
                                 Target target) {
  return WithAuth(
      master, OwnerOf(target), [action](server::HttpRequest& req, const server::Principal&) {
        Result<int64_t> id = PathId(req, "id");
        if (!id.ok()) return ErrorResponse(id.status());
        return DeferredStatus([action, id = *id](server::Done<Status> done) { action(id, done); });
      });
}

Result<std::optional<server::Principal>> OptionalUser(server::Master* master,
                                                      const server::HttpRequest& req) {
  Result<server::Principal> who = Authenticate(master, Auth::kUser, req);
  if (who.ok()) return std::optional<server::Principal>(*who);
  bool none = req.Header("authorization").empty() && CookieToken(req.Header("cookie")).empty() &&
              req.Header("grpc-metadata-x-allocation-token").empty() &&
              req.Header("x-allocation-token").empty();
  if (none) return std::optional<server::Principal>();
  return who.status();
}

server::Handler NoAuth(std::function<server::HttpResponse(server::HttpRequest&)> handler) {
  return PublicRoute{std::move(handler)};
}

std::vector<RouteAuth> RouteAuthTable(const server::Router& router) {
  std::vector<RouteAuth> out;
  router.ForEachRoute(
      [&](const std::string& method, const std::string& pattern, const server::Handler& handler) {
        RouteAuth r{method, pattern, "unknown", std::nullopt};
        if (const auto* authed = handler.target<AuthedRoute>()) {
          r.access = authed->access;
          r.auth_class = authed->access.Describe();
        } else if (handler.target<PublicRoute>() != nullptr) {
          r.auth_class = "public";
        }
        out.push_back(std::move(r));
      });
  return out;
}

server::HttpResponse JsonResponse(const json& body, int status) {
  server::HttpResponse resp;
  resp.status = status;
  resp.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return resp;
}

// With a stack of its own, not recursion: the depth of `j` is the caller's input.
void DropNullFields(json& j) {
  std::vector<json*> todo{&j};
  while (!todo.empty()) {
    json* v = todo.back();
    todo.pop_back();
    if (v->is_object()) {
      for (auto it = v->begin(); it != v->end();) {
        if (it->is_null()) {
          it = v->erase(it);
          continue;
        }
        if (!IsFreeFormKey(it.key())) todo.push_back(&*it);
        ++it;
      }
    } else if (v->is_array()) {
      for (auto& e : *v) todo.push_back(&e);
    }
  }
}

Result<json> ParseBody(const server::HttpRequest& req) {
  if (req.body.empty()) return json::object();
  DET_ASSIGN_OR_RETURN(json j, ParseJsonBounded(req.body, "request body"));
  DropNullFields(j);
  return j;
}

const json* Field(const json& obj, const char* camel, const char* snake) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(camel);
  if (it != obj.end() && !it->is_null()) return &*it;
  it = obj.find(snake);
  if (it != obj.end() && !it->is_null()) return &*it;
  return nullptr;
}

Result<int64_t> PathId(const server::HttpRequest& req, const char* name) {
  auto it = req.params.find(name);
  if (it == req.params.end()) return InvalidArgument(std::string(name) + ": missing");
  return ParseId(it->second, name);
}

Result<int64_t> QueryInt(const server::HttpRequest& req, const char* name, int64_t fallback) {
  std::string v = req.Query(name);
  if (v.empty()) return fallback;
  std::optional<int64_t> n = WholeInt64(v);
  if (!n) return InvalidArgument(std::string(name) + ": must be an integer (got '" + v + "')");
  return *n;
}

bool QueryBool(const server::HttpRequest& req, const char* name, bool fallback) {
  std::string v = req.Query(name);
  if (v.empty()) return fallback;
  return v == "true" || v == "1";
}

Result<json> Paginate(const server::HttpRequest& req, const json& items, const char* key) {
  DET_ASSIGN_OR_RETURN(int64_t offset, QueryInt(req, "offset", 0));
  DET_ASSIGN_OR_RETURN(int64_t limit, QueryInt(req, "limit", 0));
  if (offset < 0)
    return InvalidArgument("offset: must be >= 0 (got " + std::to_string(offset) + ")");
  int64_t total = static_cast<int64_t>(items.size());
  json page = json::array();
  for (int64_t i = offset; i < total && (limit <= 0 || i < offset + limit); ++i) {
    page.push_back(items[i]);
  }
  int64_t count = static_cast<int64_t>(page.size());
  return json{{key, std::move(page)}, {"pagination", PaginationJson(offset, limit, count, total)}};
}

}  // namespace det::master::api
