#pragma once
// Shared pieces of the route handlers: authentication wrappers, JSON bodies and fields.

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "master/api/error_mapping.h"
#include "master/core/permissions.h"
#include "master/server/http_server.h"
#include "master/server/master.h"

namespace det::master::api {

using AuthedHandler =
    std::function<server::HttpResponse(server::HttpRequest&, const server::Principal&)>;

// Which credentials a route takes: a user's session, or also a trial's allocation token.
enum class Auth { kUser, kUserOrAllocation };

// What a route's permission check looks at (the path parameter `Access::param` names it).
enum class Target {
  kNone,        // nothing owned: cluster-wide reads, creating, admin-only management
  kExperiment,  // an experiment id
  kTrial,       // a trial id
  kCheckpoint,  // a checkpoint uuid
  kAllocation,  // an allocation id
  kWorkspace,   // a workspace id
  kProject,     // a project id
  kHandler,     // the handler (or the service it calls) applies the rule to what the body names
};

// A route's permission: which credentials, which action of master/core/permissions.h, on what.
// WithAuth checks it before the handler runs; 401 without a valid credential, 403 naming the
// caller, action and resource when the policy says no.
struct Access {
  Auth auth = Auth::kUser;
  core::Action action = core::Action::kRead;
  Target target = Target::kNone;
  const char* param = "id";

  // "user read", "owner or admin: experiment {id}", ... (the route table's auth class).
  std::string Describe() const;
};

// Any logged-in user reads (the default of WithAuth(master, Auth::kUser, ...)).
Access Read();
// Any user creates (what they create is theirs).
Access Create();
// A user reads; a trial's allocation token only when the trial is its own.
Access ReadTrial(const char* param = "id");
// A user reads; an allocation token only its own trial's experiment.
Access ReadExperiment(const char* param = "id");
// A user reads; an allocation token a checkpoint of its experiment or owner (warm starts).
Access ReadCheckpoint(const char* param = "uuid");
// A trial's own reports (metrics, progress, searcher operations): its allocation token, or the
// owner of its experiment or an admin.
Access ReportTrial(const char* param = "id");
// Reports of a user-run (unmanaged) trial: its experiment's owner or an admin.
Access OwnTrialReport();
// A checkpoint's own trial (its metadata): its allocation token, its owner or an admin.
Access ReportCheckpoint();
// The same for an allocation's routes (preemption, rendezvous).
Access ReportAllocation(const char* param = "id");
// Changing or deleting what a user owns: its owner or an admin.
Access OwnerOf(Target target, const char* param = "id");
Access ExperimentOwner();  // OwnerOf(Target::kExperiment)
Access WorkspaceOwner();   // OwnerOf(Target::kWorkspace)
Access ProjectOwner();     // OwnerOf(Target::kProject)
// Every user edits it (models, model versions, templates: Determined's basic rules).
Access EditShared();
// Admins only: users, agents, pools, the master config, webhooks.
Access AdminOnly(core::Action action = core::Action::kManageCluster);
// Authenticated; the handler or its service checks the rule on what the body names.
Access CheckedInHandler(Auth auth, core::Action action);
Access Checked(core::Action action);  // CheckedInHandler(Auth::kUser, action)
// CheckedInHandler(Auth::kUserOrAllocation, kTrialReport): reports naming their trial in the body.
Access TrialChecked();

// The handler WithAuth returns; the route table reads `access` back from it (RouteAuthTable).
struct AuthedRoute {
  server::Master* master;
  Access access;
  AuthedHandler handler;
  server::HttpResponse operator()(server::HttpRequest& req) const;
};
// The handler NoAuth returns: a route anyone may call (login, master info, the web UI's files).
struct PublicRoute {
  std::function<server::HttpResponse(server::HttpRequest&)> handler;
  server::HttpResponse operator()(server::HttpRequest& req) const;
};

// Wraps a handler so it runs only with a valid credential that `access` allows; otherwise 401
// "token missing" / "invalid credentials" or 403 naming who, what and why. Exceptions from JSON
// access become 400s naming the problem.
server::Handler WithAuth(server::Master* master, Access access, AuthedHandler handler);
// The check WithAuth makes, for a resource a request body names: `key` is its id (uuid for a
// checkpoint; for Target::kNone, what the message calls the resource). An unknown id passes for
// users (the handler answers 404).
Status AuthorizeOn(server::Master* master, const server::Principal& who, const Access& access,
                   const std::string& key);
// OwnerOf(Target::kCheckpoint) for each uuid (bulk checkpoint deletes).
Status AuthorizeEach(server::Master* master, const server::Principal& who,
                     const std::vector<std::string>& checkpoint_uuids);
// ReportTrial() on `trial_id` (a user's report for an unmanaged trial found by its task); 0
// (no such trial) passes: the handler refuses it.
Status AuthorizeTrialReport(server::Master* master, const server::Principal& who, int64_t trial_id);
// A user's log lines for `task_id`: for an unmanaged trial (`trial_id`, found by its task) or a
// managed trial's task ("<experiment id>.<request id>", which the master maps to its trial),
// the owner of that experiment or an admin. Allocations pass (the master files their lines
// under their own trial).
Status AuthorizeTaskReport(server::Master* master, const server::Principal& who,
                           const std::string& task_id, int64_t trial_id);
// Changing a queued job: the owner of its experiment or an admin (jobs without one pass).
Status AuthorizeJob(server::Master* master, const server::Principal& who,
                    const std::string& job_id);
// The user a request's credential names, nullopt when it carries none (a route that admits
// some requests without one, e.g. a shell's /proxy/ tunnel); an error for a bad credential.
Result<std::optional<server::Principal>> OptionalUser(server::Master* master,
                                                      const server::HttpRequest& req);
// Auth::kUser: any user reads. Auth::kUserOrAllocation: the handler checks what it reaches.
server::Handler WithAuth(server::Master* master, Auth auth, AuthedHandler handler);
// A route on the {id} path parameter that runs `action(id, done)` and answers {} once it is
// done (pause, archive, kill, delete, ...: decisions of the runtime loop; the request holds no
// thread meanwhile), for the owner of the `target` (experiment, trial) or an admin.
server::Handler DeferredIdAction(server::Master* master,
                                 std::function<void(int64_t, server::Done<Status>)> action,
                                 Target target = Target::kExperiment);
// A response given once `start` calls its Done: {} or the error.
server::HttpResponse DeferredStatus(std::function<void(server::Done<Status>)> start);
// Same error handling, no authentication.
server::Handler NoAuth(std::function<server::HttpResponse(server::HttpRequest&)> handler);

// Every route of `router` with its auth class: "public", Access::Describe(), or "unknown" for
// a handler that is neither WithAuth's nor NoAuth's (a test refuses those).
struct RouteAuth {
  std::string method;
  std::string pattern;
  std::string auth_class;
  std::optional<Access> access;  // nullopt: public or unknown
};
std::vector<RouteAuth> RouteAuthTable(const server::Router& router);

server::HttpResponse JsonResponse(const nlohmann::json& body, int status = 200);
// Parses the request body; an empty body is {}. A null field means the field is absent
// (Determined's clients send every unset field as null), so null fields are dropped at every level
// except inside free-form objects (metadata, metrics, hparams, settings), where null is a value.
Result<nlohmann::json> ParseBody(const server::HttpRequest& req);
// The null-dropping of ParseBody, for bodies parsed elsewhere.
void DropNullFields(nlohmann::json& j);
// Reads a field by its camelCase or snake_case name.
const nlohmann::json* Field(const nlohmann::json& obj, const char* camel, const char* snake);
// Path parameter as a positive integer id.
Result<int64_t> PathId(const server::HttpRequest& req, const char* name);
// Query parameter as an integer, with a default; bad numbers are errors naming the parameter.
Result<int64_t> QueryInt(const server::HttpRequest& req, const char* name, int64_t fallback);
bool QueryBool(const server::HttpRequest& req, const char* name, bool fallback);
// Slices `items` by the request's offset/limit into {<key>: [...], pagination: {...}}.
Result<nlohmann::json> Paginate(const server::HttpRequest& req, const nlohmann::json& items,
                                const char* key);

}  // namespace det::master::api
