// det model (m): list (default) / create / describe / register-version / list-versions / delete /
// move, with the arguments and tables of Determined's CLI.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_context.h"
#include "cli/format.h"
#include "cli/model_render.h"
#include "cli/table.h"
#include "common/http_client.h"

namespace det::cli {
namespace {

using json = nlohmann::json;

std::string ModelPath(const std::string& name) { return "/api/v1/models/" + UrlEncode(name); }

Result<json> GetModel(Session& session, const std::string& name) {
  DET_ASSIGN_OR_RETURN(json resp, session.Get(ModelPath(name)));
  json m = resp.value("model", json());
  if (!m.is_object()) return Internal("the master's answer holds no model");
  return m;
}

// Every version of the model, the newest first (as Model.list_versions() returns them).
Result<json> ListVersions(Session& session, const json& model, const std::string& order) {
  json all = json::array();
  int64_t offset = 0;
  for (;;) {
    DET_ASSIGN_OR_RETURN(
        json page, session.Get(ModelPath(model.value("name", "")) + "/versions?orderBy=" + order +
                               "&offset=" + std::to_string(offset)));
    json versions = page.value("modelVersions", json::array());
    for (auto& v : versions) all.push_back(std::move(v));
    json p = page.value("pagination", json::object());
    int64_t end = JsonInt(p.value("endIndex", json())).value_or(0);
    int64_t total = JsonInt(p.value("total", json())).value_or(0);
    if (end >= total || end <= offset) break;
    offset = end;
  }
  return all;
}

// The model's newest version (nullopt when it has none) or version `number`.
Result<std::optional<json>> GetVersion(Session& session, const json& model, int64_t number) {
  if (number == -1) {
    DET_ASSIGN_OR_RETURN(json page, session.Get(ModelPath(model.value("name", "")) +
                                                "/versions?limit=1&sortBy=SORT_BY_VERSION"
                                                "&orderBy=ORDER_BY_DESC"));
    json versions = page.value("modelVersions", json::array());
    if (versions.empty()) return std::optional<json>();
    return std::optional<json>(versions[0]);
  }
  DET_ASSIGN_OR_RETURN(json resp, session.Get(ModelPath(model.value("name", "")) + "/versions/" +
                                              std::to_string(number)));
  return std::optional<json>(resp.value("modelVersion", json()));
}

void PrintModel(const json& model) {
  Print(RenderPresto(ModelDescribeHeaders(), {ModelDescribeRow(model)}) + "\n");
}

void PrintVersions(const json& versions) {
  std::vector<TableRow> rows;
  for (const auto& v : versions) rows.push_back(ModelVersionRow(v));
  Print(RenderPresto(ModelVersionHeaders(), rows) + "\n");
}

void PrintJson(const json& value) { Print(value.dump(2) + "\n"); }

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t pos = text.find(',', start);
    out.push_back(text.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
    if (pos == std::string::npos) return out;
    start = pos + 1;
  }
}

struct ListArgs {
  std::string workspace_names;
  std::string sort_by = "last_updated_time";
  std::string order_by = "asc";
  bool json_out = false;
};

Status ListModels(CliContext& ctx, const ListArgs& args) {
  std::string query =
      "?sortBy=SORT_BY_" + Upper(args.sort_by) + "&orderBy=ORDER_BY_" + Upper(args.order_by);
  if (!args.workspace_names.empty()) {
    for (const auto& w : SplitCommas(args.workspace_names)) {
      query += "&workspaceNames=" + UrlEncode(w);
    }
  }
  Session& session = ctx.GetSession();
  json models = json::array();
  int64_t offset = 0;
  for (;;) {
    DET_ASSIGN_OR_RETURN(
        json page, session.Get("/api/v1/models" + query + "&offset=" + std::to_string(offset)));
    for (auto& m : page.value("models", json::array())) models.push_back(std::move(m));
    json p = page.value("pagination", json::object());
    int64_t end = JsonInt(p.value("endIndex", json())).value_or(0);
    int64_t total = JsonInt(p.value("total", json())).value_or(0);
    if (end >= total || end <= offset) break;
    offset = end;
  }
  if (args.json_out) {
    json out = json::array();
    for (const auto& m : models) out.push_back(ModelSummaryJson(m));
    PrintJson(out);
    return Status::Ok();
  }
  std::vector<TableRow> rows;
  for (const auto& m : models) rows.push_back(ModelListRow(m));
  Print(RenderPresto(ModelListHeaders(), rows) + "\n");
  return Status::Ok();
}

}  // namespace

void RegisterModelCommands(CLI::App& app, CliContext& ctx) {
  // Determined's "m|odel": any prefix from "m" on.
  CLI::App* model = app.add_subcommand("model", "manage models");
  for (const char* alias : {"m", "mo", "mod", "mode"}) model->alias(alias);
  model->require_subcommand(0, 1);

  auto list_args = std::make_shared<ListArgs>();
  CLI::App* list = model->add_subcommand("list", "list all models in the registry")->alias("ls");
  list->add_option("-w,--workspace-names", list_args->workspace_names,
                   "list models in given list of comma-separated workspaces");
  list->add_option("--sort-by", list_args->sort_by, "sort models by the given field")
      ->check(CLI::IsMember({"name", "description", "creation_time", "last_updated_time"}));
  list->add_option("--order-by", list_args->order_by,
                   "order models in either ascending or descending order")
      ->check(CLI::IsMember({"asc", "desc"}));
  list->add_flag("--json", list_args->json_out, "print as JSON");
  list->callback([&ctx, list_args] {
    ctx.SetAction("list models", [&ctx, list_args] { return ListModels(ctx, *list_args); });
  });
  // `det model` alone lists, as Determined's (list is its default subcommand).
  model->callback([&ctx, model, list_args] {
    if (model->get_subcommands().empty()) {
      ctx.SetAction("list models", [&ctx, list_args] { return ListModels(ctx, *list_args); });
    }
  });

  struct RegisterArgs {
    std::string name, uuid;
    bool json_out = false;
  };
  auto reg = std::make_shared<RegisterArgs>();
  CLI::App* register_version =
      model->add_subcommand("register-version", "register a new version of a model");
  register_version->add_option("name", reg->name, "name of the model")->required();
  register_version
      ->add_option("uuid", reg->uuid, "uuid to register as the next version of the model")
      ->required();
  register_version->add_flag("--json", reg->json_out, "print as JSON");
  register_version->callback([&ctx, reg] {
    ctx.SetAction("register model version", [&ctx, reg]() -> Status {
      Session& session = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json m, GetModel(session, reg->name));
      DET_ASSIGN_OR_RETURN(
          json resp, session.Post(ModelPath(reg->name) + "/versions",
                                  json{{"checkpointUuid", reg->uuid}, {"modelName", reg->name}}));
      if (reg->json_out) {
        PrintJson(resp);
        return Status::Ok();
      }
      PrintModel(m);
      Print("\n\n");
      PrintVersions(json::array({resp.value("modelVersion", json::object())}));
      return Status::Ok();
    });
  });

  struct DescribeArgs {
    std::string name;
    bool json_out = false;
    int64_t version = -1;
  };
  auto desc = std::make_shared<DescribeArgs>();
  CLI::App* describe = model->add_subcommand("describe", "describe model");
  describe->add_option("name", desc->name, "name of model to describe")->required();
  describe->add_flag("--json", desc->json_out, "print as JSON");
  describe->add_option("--version", desc->version,
                       "model version information to include in output");
  describe->callback([&ctx, desc] {
    ctx.SetAction("describe model", [&ctx, desc]() -> Status {
      Session& session = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json m, GetModel(session, desc->name));
      DET_ASSIGN_OR_RETURN(std::optional<json> version, GetVersion(session, m, desc->version));
      if (desc->json_out) {
        PrintJson(ModelSummaryJson(m));
        return Status::Ok();
      }
      PrintModel(m);
      if (version) {
        Print("\n\n");
        PrintVersions(json::array({*version}));
      }
      return Status::Ok();
    });
  });

  struct NameArgs {
    std::string name;
    bool json_out = false;
    std::string workspace_name;
    std::string description;
    bool description_given = false;
  };
  auto lv = std::make_shared<NameArgs>();
  CLI::App* list_versions = model->add_subcommand("list-versions", "list the versions of a model");
  list_versions->add_option("name", lv->name, "unique name of the model")->required();
  list_versions->add_flag("--json", lv->json_out, "print as JSON");
  list_versions->callback([&ctx, lv] {
    ctx.SetAction("list model versions", [&ctx, lv]() -> Status {
      Session& session = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json m, GetModel(session, lv->name));
      if (lv->json_out) {
        DET_ASSIGN_OR_RETURN(
            json resp,
            session.Get("/api/v1/models/" + std::to_string(m.value("id", 0)) + "/versions"));
        PrintJson(resp);
        return Status::Ok();
      }
      DET_ASSIGN_OR_RETURN(json versions, ListVersions(session, m, "ORDER_BY_DESC"));
      PrintModel(m);
      Print("\n\n");
      PrintVersions(versions);
      return Status::Ok();
    });
  });

  auto del = std::make_shared<NameArgs>();
  CLI::App* del_cmd = model->add_subcommand("delete", "delete model");
  del_cmd->add_option("name", del->name, "unique name of the model")->required();
  del_cmd->callback([&ctx, del] {
    ctx.SetAction("delete model", [&ctx, del]() -> Status {
      Session& session = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json m, GetModel(session, del->name));
      return session.Call("DELETE", ModelPath(m.value("name", del->name)), std::nullopt).status();
    });
  });

  auto create = std::make_shared<NameArgs>();
  CLI::App* create_cmd = model->add_subcommand("create", "create model");
  create_cmd->add_option("name", create->name, "unique name of the model")->required();
  create_cmd->add_option("-w,--workspace-name", create->workspace_name, "workspace name");
  create_cmd->add_option("--description", create->description, "description of the model");
  create_cmd->add_flag("--json", create->json_out, "print as JSON");
  create_cmd->callback([&ctx, create] {
    ctx.SetAction("create model", [&ctx, create]() -> Status {
      json body = {{"name", create->name},
                   {"description", create->description},
                   {"metadata", json::object()},
                   {"labels", json::array()}};
      if (!create->workspace_name.empty()) body["workspaceName"] = create->workspace_name;
      DET_ASSIGN_OR_RETURN(json resp, ctx.GetSession().Post("/api/v1/models", body));
      json m = resp.value("model", json::object());
      if (create->json_out) {
        PrintJson(ModelSummaryJson(m));
      } else {
        PrintModel(m);
      }
      return Status::Ok();
    });
  });

  auto move = std::make_shared<NameArgs>();
  CLI::App* move_cmd = model->add_subcommand("move", "move model to given workspace");
  move_cmd->add_option("name", move->name, "name of model")->required();
  move_cmd->add_option("-w,--workspace-name", move->workspace_name, "workspace name");
  move_cmd->callback([&ctx, move] {
    ctx.SetAction("move model", [&ctx, move]() -> Status {
      if (move->workspace_name.empty()) {
        return InvalidArgument("--workspace-name: required to move a model");
      }
      Session& session = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json m, GetModel(session, move->name));
      return session
          .Call("PATCH", ModelPath(m.value("name", move->name)),
                json{{"workspaceName", move->workspace_name}})
          .status();
    });
  });
}

}  // namespace det::cli
