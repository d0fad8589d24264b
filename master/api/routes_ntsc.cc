// Commands, notebooks, shells and TensorBoards (master/server/task_service.h): launch, list,
// get and kill under /api/v1/{commands,notebooks,shells,tensorboards}; a task's logs and state
// under /api/v1/tasks/{taskId}; the task process's registration of its service
// (/api/v1/allocations/{allocationId}/proxy_address and /ready).
#include "common/archive.h"
#include "common/base64.h"
#include "common/clock.h"
#include "master/api/error_mapping.h"
#include "master/api/json_views.h"
#include "master/api/log_stream.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/config/experiment_config.h"
#include "master/server/task_service.h"
#include "master/server/workspace_service.h"
#include "master/server/template_service.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::HttpResponse;
using server::Principal;
using server::TaskType;
using server::TaskView;

namespace {

struct Kind {
  TaskType type;
  const char* plural;    // path segment and list key: "commands"
  const char* singular;  // response key: "command"
  const char* id_param;  // path parameter: "commandId"
};

const Kind kKinds[] = {
    {TaskType::kCommand, "commands", "command", "commandId"},
    {TaskType::kNotebook, "notebooks", "notebook", "notebookId"},
    {TaskType::kShell, "shells", "shell", "shellId"},
    {TaskType::kTensorboard, "tensorboards", "tensorboard", "tensorboardId"},
};

// taskv1.State of a task and of its allocation.
std::string AllocationState(const store::GenericTaskRow& r) {
  if (r.state == "STATE_QUEUED") return "STATE_QUEUED";
  if (r.state == "STATE_STARTING") return "STATE_STARTING";
  if (r.state == "STATE_RUNNING") return "STATE_RUNNING";
  if (r.state == "STATE_TERMINATING") return "STATE_TERMINATING";
  return "STATE_TERMINATED";
}

std::string ExitStatus(const store::GenericTaskRow& r) {
  if (r.state != "STATE_TERMINATED") return "";
  if (!r.exit_code) return r.exit_error.empty() ? "Killed" : r.exit_error;
  std::string s = "exited with code " + std::to_string(*r.exit_code);
  return r.exit_error.empty() ? s : s + ": " + r.exit_error;
}

// The private parts of a task (a shell's private key, a notebook's token) are its owner's
// alone, as in Determined: `who` sees them only for a task of their own. Not admins either: they
// kill any task and go through /proxy/ to any, which needs neither the key nor the token.
bool RevealsSecrets(const TaskView& v, const Principal& who) {
  return !who.is_allocation && who.user_id == v.row.owner_id;
}

json TaskJson(const TaskView& v, bool reveal) {
  const store::GenericTaskRow& r = v.row;
  json out = {{"id", r.task_id},
              {"description", r.description},
              {"state", r.state},
              {"startTime", FormatRfc3339(r.registered_time)},
              {"username", r.username},
              {"displayName", r.username},
              {"userId", r.owner_id},
              {"resourcePool", v.resource_pool},
              {"jobId", r.job_id},
              {"workspaceId", r.workspace_id},
              {"exitStatus", ExitStatus(r)}};
  if (r.exit_code) out["exitCode"] = *r.exit_code;
  if (!r.agent_id.empty()) {
    out["container"] = {
        {"id", r.allocation_id},
        {"parent", r.agent_id},
        {"state", r.state == "STATE_TERMINATED" ? "STATE_TERMINATED" : "STATE_RUNNING"},
        {"devices", json::array()}};
  }
  std::string proxy = "/proxy/" + r.task_id + "/";
  switch (v.type) {
    case TaskType::kNotebook:
      out["serviceAddress"] = proxy;
      if (reveal) out["token"] = r.secrets.value("token", "");
      break;
    case TaskType::kTensorboard:
      out["serviceAddress"] = proxy;
      out["experimentIds"] = r.config.value("experiment_ids", json::array());
      out["trialIds"] = r.config.value("trial_ids", json::array());
      break;
    case TaskType::kShell:
      if (reveal) out["privateKey"] = r.secrets.value("privateKey", "");
      out["publicKey"] = r.secrets.value("publicKey", "");
      out["addresses"] = json::array();
      out["agentUserGroup"] = {{"user", r.secrets.value("sshUser", "")}};
      out["serviceAddress"] = proxy;
      break;
    case TaskType::kCommand:
      break;
  }
  return out;
}

json GenericTaskJson(const TaskView& v) {
  const store::GenericTaskRow& r = v.row;
  json alloc = {{"taskId", r.task_id},
                {"allocationId", r.allocation_id.empty() ? r.task_id + ".1" : r.allocation_id},
                {"slots", v.row.config.value("resources", json::object()).value("slots", 0)},
                {"state", AllocationState(r)},
                {"isReady", r.ready}};
  if (r.start_time > 0) alloc["startTime"] = FormatRfc3339(r.start_time);
  if (r.end_time > 0) alloc["endTime"] = FormatRfc3339(r.end_time);
  if (r.exit_code) alloc["statusCode"] = *r.exit_code;
  if (!r.exit_error.empty()) alloc["exitReason"] = r.exit_error;
  json task = {{"taskId", r.task_id},
               {"taskType", std::string("TASK_TYPE_") + server::TaskTypeName(v.type)},
               {"allocations", json::array({alloc})},
               {"startTime", FormatRfc3339(r.registered_time)}};
  if (r.end_time > 0) task["endTime"] = FormatRfc3339(r.end_time);
  return task;
}

// The context directory of a launch: Determined's v1File list under "files".
Result<std::string> ContextTarGz(const json& body) {
  const json* files = Field(body, "files", "files");
  if (files == nullptr || files->is_null()) return std::string();
  if (!files->is_array()) return InvalidArgument("files: must be a list of files");
  if (files->empty()) return std::string();
  std::vector<ArchiveEntry> entries;
  int64_t bytes = 0;
  for (size_t i = 0; i < files->size(); ++i) {
    const json& f = (*files)[i];
    std::string where = "files[" + std::to_string(i) + "]";
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string()) {
      return InvalidArgument(where + ".path: required string");
    }
    ArchiveEntry e;
    e.path = f["path"].get<std::string>();
    if (!IsSafeRelativePath(e.path)) {
      return InvalidArgument(where + ".path: must be relative without '..' (got '" + e.path + "')");
    }
    e.is_dir = f.value("type", 48) == 53;
    const json* m = Field(f, "mode", "mode");
    e.mode = m && m->is_number_integer() ? static_cast<uint32_t>(m->get<int64_t>())
                                         : (e.is_dir ? 0755 : 0644);
    if (!e.is_dir) {
      Result<std::string> content = Base64Decode(f.value("content", ""));
      if (!content.ok()) return InvalidArgument(where + ".content: " + content.status().message());
      e.content = std::move(content).value();
      bytes += static_cast<int64_t>(e.content.size());
    }
    entries.push_back(std::move(e));
  }
  if (bytes > server::kMaxContextBytes) {
    return InvalidArgument("files: the context directory holds " + std::to_string(bytes) +
                           " bytes, more than the limit of " +
                           std::to_string(server::kMaxContextBytes));
  }
  return CreateTarGz(entries);
}

std::vector<int64_t> IdList(const json& body, const char* camel, const char* snake) {
  std::vector<int64_t> out;
  const json* v = Field(body, camel, snake);
  if (v == nullptr || !v->is_array()) return out;
  for (const auto& x : *v) {
    if (x.is_number_integer()) out.push_back(x.get<int64_t>());
  }
  return out;
}

HttpResponse Launch(server::Master* master, const Kind& kind, HttpRequest& req,
                    const Principal& who) {
  Result<json> body = ParseBody(req);
  if (!body.ok()) return ErrorResponse(body.status());
  server::LaunchTaskRequest launch;
  launch.type = kind.type;
  json config = json::object();
  if (const json* c = Field(*body, "config", "config"); c && !c->is_null()) {
    if (c->is_string()) {
      Result<json> parsed = config::YamlToJson(c->get<std::string>());
      if (!parsed.ok())
        return ErrorResponse(InvalidArgument("config: " + parsed.status().message()));
      config = *parsed;
    } else {
      config = *c;
    }
  }
  if (const json* t = Field(*body, "templateName", "template_name");
      t && t->is_string() && !t->get<std::string>().empty()) {
    Result<json> merged = master->templates()->Apply(t->get<std::string>(), config);
    if (!merged.ok()) return ErrorResponse(merged.status());
    config = *merged;
    // A template carries an experiment's keys too; a task takes only its own.
    static const char* kDropped[] = {"hyperparameters",
                                     "searcher",
                                     "name",
                                     "max_restarts",
                                     "checkpoint_storage",
                                     "records_per_epoch",
                                     "min_validation_period",
                                     "min_checkpoint_period",
                                     "scheduling_unit",
                                     "labels",
                                     "data",
                                     "reproducibility",
                                     "optimizations",
                                     "profiling",
                                     "checkpoint_policy",
                                     "perform_initial_validation",
                                     "project",
                                     "workspace",
                                     "log_policies",
                                     "integrations"};
    for (const char* k : kDropped) config.erase(k);
  }
  launch.config = std::move(config);
  if (const json* w = Field(*body, "workspaceId", "workspace_id"); w && !w->is_null()) {
    if (!w->is_number_integer() || w->get<int64_t>() < 0) {
      return ErrorResponse(InvalidArgument("workspaceId: must be a workspace id, got " + w->dump()));
    }
    if (w->get<int64_t>() > 0) launch.workspace_id = w->get<int64_t>();
  }
  // As Determined: nothing is launched in an archived workspace (404, as for a missing one).
  Result<store::WorkspaceRow> ws = master->workspaces()->GetWorkspace(launch.workspace_id);
  if (!ws.ok()) return ErrorResponse(ws.status());
  if (ws->archived) {
    return ErrorResponse(NotFound("workspace '" + ws->name +
                                  "' is archived: nothing can be launched in it"));
  }
  Result<std::string> tgz = ContextTarGz(*body);
  if (!tgz.ok()) return ErrorResponse(tgz.status());
  launch.context_tgz = std::move(tgz).value();
  if (kind.type == TaskType::kTensorboard) {
    launch.experiment_ids = IdList(*body, "experimentIds", "experiment_ids");
    launch.trial_ids = IdList(*body, "trialIds", "trial_ids");
  }
  Result<TaskView> v = master->tasks()->Launch(launch, who);
  if (!v.ok()) return ErrorResponse(v.status());
  return JsonResponse({{kind.singular, TaskJson(*v, RevealsSecrets(*v, who))},
                       {"config", ShownConfig(master, v->row.config)},
                       {"warnings", json::array()}});
}

// ndjson log lines of a task ({"result": TaskLog}), followed until the task ends.
// The logs of a command, notebook, shell or TensorBoard, or of a trial by its task id: NotFound
// when the id is neither a generic task nor has logs.
Result<LogSource> TaskLogSource(server::Master* master, const std::string& task_id) {
  server::TaskService* tasks = master->tasks();
  auto read = [tasks, task_id](int64_t after, int64_t limit, bool desc) {
    return tasks->Logs(task_id, after, limit, desc);
  };
  if (tasks->Has(task_id)) {
    return LogSource{read,
                     [tasks, task_id] {
                       Result<TaskView> v = tasks->Get(task_id);
                       return !v.ok() || v->terminal;
                     },
                     [tasks, task_id, version = std::make_shared<int64_t>(-1)] {
                       // The version seen at the last wait: a line logged since wakes at once.
                       if (*version < 0) *version = tasks->LogVersion();
                       tasks->WaitForLogs(task_id, *version, 1000);
                       *version = tasks->LogVersion();
                     }};
  }
  DET_ASSIGN_OR_RETURN(auto first, tasks->Logs(task_id, 0, 1, false));
  if (first.empty()) return NotFound("task " + task_id + " not found");
  if (first[0].trial_id <= 0) return LogSource{read, [] { return true; }, [] {}};
  server::ExperimentService* experiments = master->experiments();
  int64_t trial_id = first[0].trial_id;
  return LogSource{read, [experiments, trial_id] { return experiments->TrialFinished(trial_id); },
                   [experiments, trial_id] { experiments->WaitForTrialLogs(trial_id, 1000); }};
}

}  // namespace

void RegisterNtscRoutes(server::Router* router, server::Master* master) {
  server::TaskService* tasks = master->tasks();
  for (const Kind& kind : kKinds) {
    std::string base = std::string("/api/v1/") + kind.plural;
    router->Add(
        "POST", base,
        WithAuth(master, Auth::kUser, [master, kind](HttpRequest& req, const Principal& who) {
          return Launch(master, kind, req, who);
        }));
    router->Add(
        "GET", base,
        WithAuth(master, Auth::kUser, [tasks, kind](HttpRequest& req, const Principal& who) {
          std::vector<std::string> users = req.QueryAll("users");
          std::vector<std::string> user_ids = req.QueryAll("userIds");
          json items = json::array();
          for (const TaskView& v : tasks->List(kind.type)) {
            if (!users.empty() &&
                std::find(users.begin(), users.end(), v.row.username) == users.end()) {
              continue;
            }
            if (!user_ids.empty() && std::find(user_ids.begin(), user_ids.end(),
                                               std::to_string(v.row.owner_id)) == user_ids.end()) {
              continue;
            }
            items.push_back(TaskJson(v, RevealsSecrets(v, who)));
          }
          auto page = Paginate(req, items, kind.plural);
          return page.ok() ? JsonResponse(*page) : ErrorResponse(page.status());
        }));
    std::string one = base + "/{" + kind.id_param + "}";
    router->Add(
        "GET", one,
        WithAuth(master, Auth::kUser, [master, tasks, kind](HttpRequest& req, const Principal& who) {
          Result<TaskView> v = tasks->Get(req.params[kind.id_param]);
          if (!v.ok() || v->type != kind.type) {
            return ErrorResponse(NotFound(std::string(kind.singular) + " " +
                                          req.params[kind.id_param] + " not found"));
          }
          json out = {{kind.singular, TaskJson(*v, RevealsSecrets(*v, who))},
                      {"config", ShownConfig(master, v->row.config)}};
          return JsonResponse(out);
        }));
    router->Add(
        "POST", one + "/kill",
        WithAuth(master, Auth::kUser, [tasks, kind](HttpRequest& req, const Principal& who) {
          const std::string& id = req.params[kind.id_param];
          Result<TaskView> v = tasks->Get(id);
          if (!v.ok() || v->type != kind.type) {
            return ErrorResponse(NotFound(std::string(kind.singular) + " " + id + " not found"));
          }
          Status st = tasks->Kill(id, who);
          if (!st.ok()) return ErrorResponse(st);
          Result<TaskView> after = tasks->Get(id);
          if (!after.ok()) return ErrorResponse(after.status());
          return JsonResponse({{kind.singular, TaskJson(*after, RevealsSecrets(*after, who))}});
        }));
  }

  // Before /tasks/{taskId}, which would take "count" as an id.
  router->Add("GET", "/api/v1/tasks/count",
              WithAuth(master, Auth::kUser, [tasks](HttpRequest&, const Principal&) {
                json counts = json::object();
                for (const Kind& kind : kKinds) {
                  int64_t running = 0;
                  for (const TaskView& v : tasks->List(kind.type)) {
                    if (v.row.state == "STATE_RUNNING") ++running;
                  }
                  counts[kind.plural] = running;
                }
                return JsonResponse(counts);
              }));

  router->Add(
      "GET", "/api/v1/tasks/{taskId}",
      WithAuth(master, Auth::kUserOrAllocation, [tasks](HttpRequest& req, const Principal& who) {
        Result<TaskView> v = tasks->Get(req.params["taskId"]);
        // An allocation token reads its own task only.
        if (who.is_allocation && (!v.ok() || v->row.allocation_id != who.allocation_id)) {
          return ErrorResponse(PermissionDenied("allocation " + who.allocation_id +
                                                " may read only its own task, not task " +
                                                req.params["taskId"]));
        }
        if (!v.ok()) return ErrorResponse(v.status());
        return JsonResponse({{"task", GenericTaskJson(*v)}});
      }));

  router->Add("GET", "/api/v1/tasks/{taskId}/logs",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                Result<LogSource> source = TaskLogSource(master, req.params["taskId"]);
                if (!source.ok()) return ErrorResponse(source.status());
                return StreamLogLines(std::move(source).value(), req);
              }));

  router->Add("GET", "/api/v1/tasks/{taskId}/logs/fields",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                Result<LogSource> source = TaskLogSource(master, req.params["taskId"]);
                if (!source.ok()) return ErrorResponse(source.status());
                return StreamLogFields(std::move(source).value(), req, true);
              }));

  router->Add(
      "POST", "/api/v1/allocations/{allocationId}/proxy_address",
      WithAuth(master, Auth::kUserOrAllocation, [tasks](HttpRequest& req, const Principal& who) {
        Result<json> body = ParseBody(req);
        if (!body.ok()) return ErrorResponse(body.status());
        const json* addr = Field(*body, "proxyAddress", "proxy_address");
        if (addr == nullptr || !addr->is_string()) {
          return ErrorResponse(InvalidArgument("proxyAddress: required string host:port"));
        }
        const json* user = Field(*body, "sshUser", "ssh_user");
        Status st =
            tasks->SetProxyAddress(who, req.params["allocationId"], addr->get<std::string>(),
                                   user && user->is_string() ? user->get<std::string>() : "");
        return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
      }));

  router->Add(
      "POST", "/api/v1/allocations/{allocationId}/ready",
      WithAuth(master, Auth::kUserOrAllocation, [tasks](HttpRequest& req, const Principal& who) {
        Status st = tasks->SetReady(who, req.params["allocationId"]);
        return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
      }));
}

}  // namespace det::master::api
