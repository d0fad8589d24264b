// det workspace (w) and det project (p) commands, and `det experiment move`, with the output of
// Determined's CLI (tables, "Successfully archived workspace NAME.", ...).
#include <algorithm>
#include <memory>

#include "cli/cli_context.h"
#include "cli/format.h"
#include "cli/table.h"
#include "common/http_client.h"
#include "master/config/experiment_config.h"

namespace det::cli {
namespace {

using json = nlohmann::json;

const std::vector<std::string> kWorkspaceHeaders = {
    "ID",         "Name",        "# Projects",           "Agent Uid",       "Agent Gid",
    "Agent User", "Agent Group", "Default Compute Pool", "Default Aux Pool"};
const std::vector<std::string> kProjectHeaders = {
    "ID", "Key", "Name", "Description", "# Experiments", "# Active Experiments"};

TableCell Cell(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key)) return std::nullopt;
  return JsonCell(obj[key]);
}

// An empty string is shown as a missing value, as Determined's `x if x else None`.
TableCell NonEmpty(const json& obj, const char* key) {
  TableCell c = Cell(obj, key);
  if (c && c->empty()) return std::nullopt;
  return c;
}

std::string RenderWorkspaces(const std::vector<json>& workspaces, bool with_storage) {
  std::vector<std::string> headers = kWorkspaceHeaders;
  if (with_storage) headers.push_back("Checkpoint Storage Config");
  std::vector<TableRow> rows;
  for (const json& w : workspaces) {
    json group = w.value("agentUserGroup", json());
    TableRow row = {Cell(w, "id"),
                    Cell(w, "name"),
                    Cell(w, "numProjects"),
                    Cell(group, "agentUid"),
                    Cell(group, "agentGid"),
                    Cell(group, "agentUser"),
                    Cell(group, "agentGroup"),
                    NonEmpty(w, "defaultComputePool"),
                    NonEmpty(w, "defaultAuxPool")};
    if (with_storage) row.push_back(Cell(w, "checkpointStorageConfig"));
    rows.push_back(std::move(row));
  }
  return RenderPresto(headers, rows) + "\n";
}

// --default-compute-pool / --default-aux-pool and --checkpoint-storage-config(-file) of
// `det workspace create` and `edit`.
struct DefaultPoolArgs {
  std::optional<std::string> compute;
  std::optional<std::string> aux;
  std::optional<std::string> storage;       // JSON
  std::optional<std::string> storage_file;  // YAML or JSON

  // Adds what was given to a POST (`patch` false) or PATCH body.
  Status AddTo(json& body, bool patch) const {
    if (compute) body[patch ? "defaultComputeResourcePool" : "defaultComputePool"] = *compute;
    if (aux) body[patch ? "defaultAuxResourcePool" : "defaultAuxPool"] = *aux;
    if (storage && storage_file) {
      return InvalidArgument(
          "--checkpoint-storage-config, --checkpoint-storage-config-file: give one of them");
    }
    if (storage) {
      json parsed = json::parse(*storage, nullptr, /*allow_exceptions=*/false);
      if (parsed.is_discarded() || !parsed.is_object()) {
        return InvalidArgument("--checkpoint-storage-config: must be a JSON object (got '" +
                               *storage + "')");
      }
      body["checkpointStorageConfig"] = parsed;
    }
    if (storage_file) {
      Result<std::string> text = ReadFile(*storage_file);
      if (!text.ok()) {
        return InvalidArgument("--checkpoint-storage-config-file: cannot read " + *storage_file);
      }
      Result<json> parsed = master::config::YamlToJson(*text);
      if (!parsed.ok() || !parsed->is_object()) {
        return InvalidArgument("--checkpoint-storage-config-file: " + *storage_file +
                               " must hold a YAML or JSON map");
      }
      body["checkpointStorageConfig"] = *parsed;
    }
    return Status::Ok();
  }
};

void AddDefaultPoolArgs(CLI::App* cmd, DefaultPoolArgs& args) {
  cmd->add_option("--default-compute-pool", args.compute,
                  "name of the pool to set as the default compute pool");
  cmd->add_option("--default-aux-pool", args.aux,
                  "name of the pool to set as the default auxiliary pool");
  cmd->add_option("--checkpoint-storage-config", args.storage,
                  "Storage config (JSON-formatted string). To remove storage config use '{}'");
  cmd->add_option("--checkpoint-storage-config-file", args.storage_file,
                  "Storage config (path to YAML or JSON formatted file)");
}

std::string RenderProjects(const std::vector<json>& projects) {
  std::vector<TableRow> rows;
  for (const json& p : projects) {
    rows.push_back({Cell(p, "id"), Cell(p, "key"), Cell(p, "name"), Cell(p, "description"),
                    Cell(p, "numExperiments"), Cell(p, "numActiveExperiments")});
  }
  return RenderPresto(kProjectHeaders, rows) + "\n";
}

Result<json> WorkspaceByName(Session& session, const std::string& name) {
  DET_ASSIGN_OR_RETURN(json resp,
                       session.Get("/api/v1/workspaces?nameCaseSensitive=" + UrlEncode(name)));
  for (const json& w : resp.value("workspaces", json::array())) {
    if (w.value("name", "") == name) return w;
  }
  return NotFound("workspace '" + name + "' not found");
}

Result<json> ProjectByName(Session& session, const std::string& workspace,
                           const std::string& project) {
  DET_ASSIGN_OR_RETURN(json w, WorkspaceByName(session, workspace));
  DET_ASSIGN_OR_RETURN(json resp,
                       session.Get("/api/v1/workspaces/" + std::to_string(w["id"].get<int64_t>()) +
                                   "/projects?name=" + UrlEncode(project)));
  for (const json& p : resp.value("projects", json::array())) {
    if (p.value("name", "") == project) return p;
  }
  return NotFound("project '" + project + "' not found in workspace '" + workspace + "'");
}

std::string IdPath(const char* base, const json& obj, const char* tail = "") {
  return std::string(base) + std::to_string(obj.value("id", int64_t{0})) + tail;
}

struct ListOptions {
  std::string sort_by = "id";
  std::string order_by = "asc";
  bool json_out = false;
  int64_t limit = 200;
  int64_t offset = 0;
  bool all = false;
};

void AddSortOptions(CLI::App* cmd, ListOptions& o) {
  cmd->add_option("--sort-by", o.sort_by, "sort by the given field (id, name)")
      ->check(CLI::IsMember({"id", "name"}));
  cmd->add_option("--order-by", o.order_by, "order ascending or descending (asc, desc)")
      ->check(CLI::IsMember({"asc", "desc"}));
  cmd->add_flag("--json", o.json_out, "print as JSON");
}

// Sorts by id or name, then orders.
void SortObjects(std::vector<json>& items, const ListOptions& o) {
  std::stable_sort(items.begin(), items.end(), [&o](const json& a, const json& b) {
    if (o.sort_by == "name") return a.value("name", "") < b.value("name", "");
    return a.value("id", int64_t{0}) < b.value("id", int64_t{0});
  });
  if (o.order_by == "desc") std::reverse(items.begin(), items.end());
}

std::vector<json> Items(const json& resp, const char* key) {
  std::vector<json> out;
  for (const json& x : resp.value(key, json::array())) out.push_back(x);
  return out;
}

Status PrintProjectExperiments(Session& session, const json& project, const ListOptions& o) {
  std::string path =
      "/api/v1/experiments?projectId=" + std::to_string(project.value("id", int64_t{0})) +
      "&limit=" + std::to_string(o.limit) + "&offset=" + std::to_string(o.offset);
  if (!o.all) path += "&archived=false";
  DET_ASSIGN_OR_RETURN(json resp, session.Get(path));
  std::vector<json> exps = Items(resp, "experiments");
  if (o.json_out) {
    Print(json(exps).dump(2) + "\n");
    return Status::Ok();
  }
  std::vector<std::string> headers = {"ID",       "Owner",   "Name",  "Parent ID",    "State",
                                      "Progress", "Started", "Ended", "Resource Pool"};
  if (o.all) headers.push_back("Archived");
  std::vector<TableRow> rows;
  for (const json& e : exps) {
    TableRow row = {Cell(e, "id"),
                    Cell(e, "username"),
                    Cell(e, "name"),
                    Cell(e, "forkedFrom"),
                    StripStatePrefix(e.value("state", "")),
                    FormatPercent(e.value("progress", json())),
                    FormatTime(e.value("startTime", json())),
                    FormatTime(e.value("endTime", json())),
                    Cell(e, "resourcePool")};
    if (o.all) row.push_back(Cell(e, "archived"));
    rows.push_back(std::move(row));
  }
  Print(RenderPresto(headers, rows) + "\n");
  return Status::Ok();
}

void RegisterWorkspaceCommands(CLI::App& app, CliContext& ctx) {
  CLI::App* w = app.add_subcommand("workspace", "manage workspaces")->alias("w");
  w->require_subcommand(1);

  auto list_opts = std::make_shared<ListOptions>();
  CLI::App* list = w->add_subcommand("list", "list all workspaces")->alias("ls");
  AddSortOptions(list, *list_opts);
  list->add_option("--limit", list_opts->limit, "maximum items per page (default 200)")
      ->check(PositiveInt());
  list->add_option("--offset", list_opts->offset, "number of items to skip")
      ->check(NonNegativeInt());
  list->callback([&ctx, list_opts] {
    ctx.SetAction("list workspaces", [&ctx, list_opts]() -> Status {
      DET_ASSIGN_OR_RETURN(json resp, ctx.GetSession().Get("/api/v1/workspaces"));
      std::vector<json> items = Items(resp, "workspaces");
      SortObjects(items, *list_opts);
      std::vector<json> page;
      for (size_t i = list_opts->offset;
           i < items.size() && static_cast<int64_t>(page.size()) < list_opts->limit; ++i) {
        page.push_back(items[i]);
      }
      Print(list_opts->json_out ? json(page).dump(2) + "\n" : RenderWorkspaces(page, false));
      return Status::Ok();
    });
  });

  auto lp_name = std::make_shared<std::string>();
  auto lp_opts = std::make_shared<ListOptions>();
  CLI::App* lp =
      w->add_subcommand("list-projects", "list the projects associated with a workspace");
  lp->add_option("WORKSPACE_NAME", *lp_name, "name of the workspace")->required();
  AddSortOptions(lp, *lp_opts);
  lp->callback([&ctx, lp_name, lp_opts] {
    ctx.SetAction("list projects", [&ctx, lp_name, lp_opts]() -> Status {
      Session& s = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json ws, WorkspaceByName(s, *lp_name));
      DET_ASSIGN_OR_RETURN(json resp, s.Get(IdPath("/api/v1/workspaces/", ws, "/projects")));
      std::vector<json> items = Items(resp, "projects");
      SortObjects(items, *lp_opts);
      Print(lp_opts->json_out ? json(items).dump(2) + "\n" : RenderProjects(items));
      return Status::Ok();
    });
  });

  auto pools_name = std::make_shared<std::string>();
  CLI::App* pools = w->add_subcommand("list-pools", "list the resource pools available to a workspace");
  pools->add_option("WORKSPACE_NAME", *pools_name, "name of the workspace")->required();
  pools->callback([&ctx, pools_name] {
    ctx.SetAction("list workspace pools", [&ctx, pools_name]() -> Status {
      Session& s = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json ws, WorkspaceByName(s, *pools_name));
      DET_ASSIGN_OR_RETURN(json resp,
                           s.Get(IdPath("/api/v1/workspaces/", ws, "/available-resource-pools")));
      std::string names;
      for (const json& p : resp.value("resourcePools", json::array())) {
        if (!p.is_string()) continue;
        names += (names.empty() ? "" : ", ") + p.get<std::string>();
      }
      Print(RenderPresto({"Workspace", "Available Resource Pools"}, {{*pools_name, names}}) + "\n");
      return Status::Ok();
    });
  });

  auto create_name = std::make_shared<std::string>();
  auto create_json = std::make_shared<bool>(false);
  auto create_pools = std::make_shared<DefaultPoolArgs>();
  CLI::App* create = w->add_subcommand("create", "create workspace");
  create->add_option("NAME", *create_name, "unique name of the workspace")->required();
  AddDefaultPoolArgs(create, *create_pools);
  create->add_flag("--json", *create_json, "print as JSON");
  create->callback([&ctx, create_name, create_json, create_pools] {
    ctx.SetAction("create workspace", [&ctx, create_name, create_json, create_pools]() -> Status {
      json body = {{"name", *create_name}};
      DET_RETURN_IF_ERROR(create_pools->AddTo(body, false));
      DET_ASSIGN_OR_RETURN(json resp, ctx.GetSession().Post("/api/v1/workspaces", body));
      json ws = resp.value("workspace", json::object());
      Print(*create_json ? ws.dump(2) + "\n" : RenderWorkspaces({ws}, true));
      return Status::Ok();
    });
  });

  auto describe_name = std::make_shared<std::string>();
  auto describe_json = std::make_shared<bool>(false);
  CLI::App* describe = w->add_subcommand("describe", "describe workspace");
  describe->add_option("WORKSPACE_NAME", *describe_name, "name of the workspace")->required();
  describe->add_flag("--json", *describe_json, "print as JSON");
  describe->callback([&ctx, describe_name, describe_json] {
    ctx.SetAction("describe workspace", [&ctx, describe_name, describe_json]() -> Status {
      DET_ASSIGN_OR_RETURN(json ws, WorkspaceByName(ctx.GetSession(), *describe_name));
      Print(*describe_json ? ws.dump(2) + "\n" : RenderWorkspaces({ws}, true));
      return Status::Ok();
    });
  });

  auto delete_name = std::make_shared<std::string>();
  auto delete_yes = std::make_shared<bool>(false);
  CLI::App* del = w->add_subcommand("delete", "delete workspace");
  del->add_option("WORKSPACE_NAME", *delete_name, "name of the workspace")->required();
  del->add_flag("--yes,-y", *delete_yes, "automatically answer yes to prompts");
  del->callback([&ctx, delete_name, delete_yes] {
    ctx.SetAction("delete workspace", [&ctx, delete_name, delete_yes]() -> Status {
      Session& s = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json ws, WorkspaceByName(s, *delete_name));
      if (!*delete_yes &&
          !AskYesOrNo("Deleting workspace \"" + *delete_name +
                      "\" will result \nin the unrecoverable deletion of all associated "
                      "projects and templates.\nFor a recoverable alternative, see the "
                      "'archive' command. Do you still \nwish to proceed?")) {
        Print("Aborting workspace deletion.\n");
        return Status::Ok();
      }
      DET_RETURN_IF_ERROR(
          s.Call("DELETE", IdPath("/api/v1/workspaces/", ws), std::nullopt).status());
      Print("Successfully deleted workspace " + *delete_name + ".\n");
      return Status::Ok();
    });
  });

  for (bool archive : {true, false}) {
    auto name = std::make_shared<std::string>();
    CLI::App* cmd = w->add_subcommand(archive ? "archive" : "unarchive",
                                      archive ? "archive workspace" : "unarchive workspace");
    cmd->add_option("WORKSPACE_NAME", *name, "name of the workspace")->required();
    cmd->callback([&ctx, name, archive] {
      ctx.SetAction(
          archive ? "archive workspace" : "unarchive workspace", [&ctx, name, archive]() -> Status {
            Session& s = ctx.GetSession();
            DET_ASSIGN_OR_RETURN(json ws, WorkspaceByName(s, *name));
            DET_RETURN_IF_ERROR(
                s.Post(IdPath("/api/v1/workspaces/", ws, archive ? "/archive" : "/unarchive"),
                       json::object())
                    .status());
            Print(std::string("Successfully ") + (archive ? "archived" : "un-archived") +
                  " workspace " + *name + ".\n");
            return Status::Ok();
          });
    });
  }

  auto edit_name = std::make_shared<std::string>();
  auto edit_new = std::make_shared<std::string>();
  auto edit_json = std::make_shared<bool>(false);
  auto edit_pools = std::make_shared<DefaultPoolArgs>();
  CLI::App* edit = w->add_subcommand("edit", "edit workspace");
  edit->add_option("WORKSPACE_NAME", *edit_name, "current name of the workspace")->required();
  edit->add_option("--name", *edit_new, "new name of the workspace");
  AddDefaultPoolArgs(edit, *edit_pools);
  edit->add_flag("--json", *edit_json, "print as JSON");
  edit->callback([&ctx, edit_name, edit_new, edit_json, edit_pools] {
    ctx.SetAction("edit workspace", [&ctx, edit_name, edit_new, edit_json, edit_pools]() -> Status {
      Session& s = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json ws, WorkspaceByName(s, *edit_name));
      json body = json::object();
      if (!edit_new->empty()) body["name"] = *edit_new;
      DET_RETURN_IF_ERROR(edit_pools->AddTo(body, true));
      DET_ASSIGN_OR_RETURN(json resp, s.Call("PATCH", IdPath("/api/v1/workspaces/", ws), body));
      json updated = resp.value("workspace", json::object());
      Print(*edit_json ? updated.dump(2) + "\n" : RenderWorkspaces({updated}, true));
      return Status::Ok();
    });
  });
}

void RegisterProjectCommands(CLI::App& app, CliContext& ctx) {
  CLI::App* p = app.add_subcommand("project", "manage projects")->alias("p");
  p->require_subcommand(1);

  auto list_ws = std::make_shared<std::string>();
  auto list_opts = std::make_shared<ListOptions>();
  CLI::App* list =
      p->add_subcommand("list", "list the projects associated with a workspace")->alias("ls");
  list->add_option("WORKSPACE_NAME", *list_ws, "name of the workspace")->required();
  AddSortOptions(list, *list_opts);
  list->add_option("--limit", list_opts->limit, "maximum items per page (default 200)")
      ->check(PositiveInt());
  list->add_option("--offset", list_opts->offset, "number of items to skip")
      ->check(NonNegativeInt());
  list->callback([&ctx, list_ws, list_opts] {
    ctx.SetAction("list projects", [&ctx, list_ws, list_opts]() -> Status {
      Session& s = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json ws, WorkspaceByName(s, *list_ws));
      DET_ASSIGN_OR_RETURN(json resp, s.Get(IdPath("/api/v1/workspaces/", ws, "/projects")));
      std::vector<json> items = Items(resp, "projects");
      SortObjects(items, *list_opts);
      std::vector<json> page;
      for (size_t i = list_opts->offset;
           i < items.size() && static_cast<int64_t>(page.size()) < list_opts->limit; ++i) {
        page.push_back(items[i]);
      }
      Print(list_opts->json_out ? json(page).dump(2) + "\n" : RenderProjects(page));
      return Status::Ok();
    });
  });

  struct Names {
    std::string workspace;
    std::string project;
    ListOptions opts;
  };

  auto le = std::make_shared<Names>();
  CLI::App* list_exps =
      p->add_subcommand("list-experiments", "list the experiments associated with a project");
  list_exps->add_option("WORKSPACE_NAME", le->workspace, "name of the workspace")->required();
  list_exps->add_option("PROJECT_NAME", le->project, "name of the project")->required();
  list_exps->add_flag("--all,-a", le->opts.all, "show all experiments, archived ones too");
  list_exps->add_option("--sort-by", le->opts.sort_by, "accepted for compatibility");
  list_exps->add_option("--order-by", le->opts.order_by, "accepted for compatibility");
  list_exps->add_option("--limit", le->opts.limit, "maximum items per page")->check(PositiveInt());
  list_exps->add_option("--offset", le->opts.offset, "number of items to skip")
      ->check(NonNegativeInt());
  list_exps->add_flag("--json", le->opts.json_out, "print as JSON");
  list_exps->callback([&ctx, le] {
    ctx.SetAction("list experiments", [&ctx, le]() -> Status {
      Session& s = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json project, ProjectByName(s, le->workspace, le->project));
      return PrintProjectExperiments(s, project, le->opts);
    });
  });

  struct CreateArgs {
    std::string workspace;
    std::string name;
    std::string description;
    std::string key;
    bool json_out = false;
  };
  auto ca = std::make_shared<CreateArgs>();
  CLI::App* create = p->add_subcommand("create", "create project");
  create->add_option("WORKSPACE_NAME", ca->workspace, "name of the workspace")->required();
  create->add_option("NAME", ca->name, "name of the project")->required();
  create->add_option("--description", ca->description, "description of the project");
  create->add_option("--key", ca->key, "key of the project");
  create->add_flag("--json", ca->json_out, "print as JSON");
  create->callback([&ctx, ca] {
    ctx.SetAction("create project", [&ctx, ca]() -> Status {
      Session& s = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json ws, WorkspaceByName(s, ca->workspace));
      json body = {{"name", ca->name}, {"workspaceId", ws["id"]}};
      if (!ca->description.empty()) body["description"] = ca->description;
      if (!ca->key.empty()) body["key"] = ca->key;
      DET_ASSIGN_OR_RETURN(json resp, s.Post(IdPath("/api/v1/workspaces/", ws, "/projects"), body));
      json project = resp.value("project", json::object());
      Print(ca->json_out ? project.dump(2) + "\n" : RenderProjects({project}));
      return Status::Ok();
    });
  });

  auto de = std::make_shared<Names>();
  CLI::App* describe = p->add_subcommand("describe", "describe project");
  describe->add_option("WORKSPACE_NAME", de->workspace, "name of the workspace")->required();
  describe->add_option("PROJECT_NAME", de->project, "name of the project")->required();
  describe->add_flag("--all,-a", de->opts.all, "show all experiments, archived ones too");
  describe->add_flag("--json", de->opts.json_out, "print as JSON");
  describe->callback([&ctx, de] {
    ctx.SetAction("describe project", [&ctx, de]() -> Status {
      Session& s = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json project, ProjectByName(s, de->workspace, de->project));
      if (de->opts.json_out) {
        Print(project.dump(2) + "\n");
        return Status::Ok();
      }
      Print(RenderProjects({project}) + "\nAssociated Experiments\n");
      return PrintProjectExperiments(s, project, de->opts);
    });
  });

  auto dl = std::make_shared<Names>();
  auto dl_yes = std::make_shared<bool>(false);
  CLI::App* del = p->add_subcommand("delete", "delete project");
  del->add_option("WORKSPACE_NAME", dl->workspace, "name of the workspace")->required();
  del->add_option("PROJECT_NAME", dl->project, "name of the project")->required();
  del->add_flag("--yes,-y", *dl_yes, "automatically answer yes to prompts");
  del->callback([&ctx, dl, dl_yes] {
    ctx.SetAction("delete project", [&ctx, dl, dl_yes]() -> Status {
      Session& s = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json project, ProjectByName(s, dl->workspace, dl->project));
      if (!*dl_yes && !AskYesOrNo("Deleting project \"" + dl->project +
                                  "\" will result in the \nunrecoverable deletion of the "
                                  "project. Do you still wish to proceed?")) {
        Print("Aborting project deletion.\n");
        return Status::Ok();
      }
      DET_RETURN_IF_ERROR(
          s.Call("DELETE", IdPath("/api/v1/projects/", project), std::nullopt).status());
      Print("Successfully deleted project " + dl->project + ".\n");
      return Status::Ok();
    });
  });

  for (bool archive : {true, false}) {
    auto names = std::make_shared<Names>();
    CLI::App* cmd = p->add_subcommand(archive ? "archive" : "unarchive",
                                      archive ? "archive project" : "unarchive project");
    cmd->add_option("WORKSPACE_NAME", names->workspace, "name of the workspace")->required();
    cmd->add_option("PROJECT_NAME", names->project, "name of the project")->required();
    cmd->callback([&ctx, names, archive] {
      ctx.SetAction(
          archive ? "archive project" : "unarchive project", [&ctx, names, archive]() -> Status {
            Session& s = ctx.GetSession();
            DET_ASSIGN_OR_RETURN(json project, ProjectByName(s, names->workspace, names->project));
            DET_RETURN_IF_ERROR(
                s.Post(IdPath("/api/v1/projects/", project, archive ? "/archive" : "/unarchive"),
                       json::object())
                    .status());
            Print(std::string("Successfully ") + (archive ? "archived" : "un-archived") +
                  " project " + names->project + ".\n");
            return Status::Ok();
          });
    });
  }

  struct EditArgs {
    std::string workspace;
    std::string project;
    std::string new_name;
    std::string description;
    std::string key;
    bool json_out = false;
  };
  auto ed = std::make_shared<EditArgs>();
  CLI::App* edit = p->add_subcommand("edit", "edit project");
  edit->add_option("WORKSPACE_NAME", ed->workspace, "name of the workspace")->required();
  edit->add_option("PROJECT_NAME", ed->project, "name of the project")->required();
  CLI::Option* new_name =
      edit->add_option("--new_name,--new-name", ed->new_name, "new name of the project");
  CLI::Option* description =
      edit->add_option("--description", ed->description, "description of the project");
  CLI::Option* key = edit->add_option("--key", ed->key, "key of the project");
  edit->add_flag("--json", ed->json_out, "print as JSON");
  edit->callback([&ctx, ed, new_name, description, key] {
    ctx.SetAction("edit project", [&ctx, ed, new_name, description, key]() -> Status {
      Session& s = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json project, ProjectByName(s, ed->workspace, ed->project));
      json body = json::object();
      if (new_name->count() > 0) body["name"] = ed->new_name;
      if (description->count() > 0) body["description"] = ed->description;
      if (key->count() > 0) body["key"] = ed->key;
      DET_ASSIGN_OR_RETURN(json resp, s.Call("PATCH", IdPath("/api/v1/projects/", project), body));
      json updated = resp.value("project", json::object());
      Print(ed->json_out ? updated.dump(2) + "\n" : RenderProjects({updated}));
      return Status::Ok();
    });
  });
}

}  // namespace

void RegisterWorkspaceProjectCommands(CLI::App& app, CliContext& ctx) {
  RegisterWorkspaceCommands(app, ctx);
  RegisterProjectCommands(app, ctx);

  // det experiment move EXPERIMENT_ID WORKSPACE_NAME PROJECT_NAME
  CLI::App* exp = app.get_subcommand("experiment");
  struct MoveArgs {
    int64_t id = 0;
    std::string workspace;
    std::string project;
  };
  auto mv = std::make_shared<MoveArgs>();
  CLI::App* move = exp->add_subcommand("move", "move experiment to another project");
  move->add_option("EXPERIMENT_ID", mv->id, "experiment ID to move")
      ->required()
      ->check(PositiveInt());
  move->add_option("WORKSPACE_NAME", mv->workspace, "name of destination workspace")->required();
  move->add_option("PROJECT_NAME", mv->project, "name of destination project")->required();
  move->callback([&ctx, mv] {
    ctx.SetAction("move experiment", [&ctx, mv]() -> Status {
      Session& s = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json project, ProjectByName(s, mv->workspace, mv->project));
      json body = {{"destinationProjectId", project["id"]}, {"experimentId", mv->id}};
      DET_RETURN_IF_ERROR(
          s.Post("/api/v1/experiments/" + std::to_string(mv->id) + "/move", body).status());
      Print("Moved experiment " + std::to_string(mv->id) + " to project \"" + mv->project + "\"\n");
      return Status::Ok();
    });
  });
}

}  // namespace det::cli
