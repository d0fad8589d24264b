// det template (tpl) list | describe | set | set-value config | create | remove: config templates
// (/api/v1/templates), with Determined's output lines.
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "cli/cli_context.h"
#include "cli/table.h"
#include "cli/workspace_lookup.h"
#include "cli/yaml_render.h"
#include "common/http_client.h"

namespace det::cli {
namespace {

using json = nlohmann::json;

// The template file, a YAML mapping of experiment-config fields.
Result<json> ReadTemplateFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read the template file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  Result<json> config = master::config::YamlToJson(ss.str());
  if (!config.ok()) return InvalidArgument(path + ": " + config.status().message());
  if (!config->is_object()) {
    return InvalidArgument(path + ": a template must be a mapping of config fields");
  }
  return config;
}

std::string TemplatePath(const std::string& name) { return "/api/v1/templates/" + UrlEncode(name); }

Status ListTemplates(CliContext& ctx, bool details) {
  Session& session = ctx.GetSession();
  DET_ASSIGN_OR_RETURN(json resp, session.Get("/api/v1/templates"));
  DET_ASSIGN_OR_RETURN(auto names, WorkspaceNames(session));
  std::vector<std::string> headers = {"Name", "Workspace"};
  if (details) headers.push_back("Config");
  std::vector<TableRow> rows;
  for (const json& t : resp.value("templates", json::array())) {
    int64_t ws = t.value("workspaceId", int64_t{0});
    auto it = names.find(ws);
    TableRow row = {t.value("name", ""),
                    it == names.end() ? std::string("missing workspace") : it->second};
    if (details) {
      std::string yaml = RenderYaml(t.value("config", json::object()));
      if (!yaml.empty() && yaml.back() == '\n') yaml.pop_back();
      row.push_back(yaml);
    }
    rows.push_back(std::move(row));
  }
  Print(RenderPresto(headers, rows) + "\n");
  return Status::Ok();
}

struct NameFile {
  std::string name;
  std::string file;
  std::string workspace;
};

}  // namespace

void RegisterTemplateCommands(CLI::App& app, CliContext& ctx) {
  CLI::App* tpl = app.add_subcommand("template", "manage config templates")->alias("tpl");
  tpl->require_subcommand(1);

  auto details = std::make_shared<bool>(false);
  CLI::App* list = tpl->add_subcommand("list", "list config templates")->alias("ls");
  list->add_flag("-d,--details", *details, "show the configs of the templates");
  list->callback([&ctx, details] {
    ctx.SetAction("list templates", [&ctx, details] { return ListTemplates(ctx, *details); });
  });

  auto describe_name = std::make_shared<std::string>();
  CLI::App* describe = tpl->add_subcommand("describe", "describe config template");
  describe->add_option("TEMPLATE_NAME", *describe_name, "template name")->required();
  describe->callback([&ctx, describe_name] {
    ctx.SetAction("describe template", [&ctx, describe_name]() -> Status {
      DET_ASSIGN_OR_RETURN(json resp, ctx.GetSession().Get(TemplatePath(*describe_name)));
      Print(RenderYaml(resp.value("template", json::object()).value("config", json::object())));
      return Status::Ok();
    });
  });

  // set: create, or replace the config of an existing template.
  auto set_args = std::make_shared<NameFile>();
  CLI::App* set = tpl->add_subcommand("set", "set config template (create or replace)");
  set->add_option("TEMPLATE_NAME", set_args->name, "template name")->required();
  set->add_option("TEMPLATE_FILE", set_args->file, "config template file (.yaml)")->required();
  set->callback([&ctx, set_args] {
    ctx.SetAction("set template", [&ctx, set_args]() -> Status {
      DET_ASSIGN_OR_RETURN(json config, ReadTemplateFile(set_args->file));
      Session& session = ctx.GetSession();
      Result<json> existing = session.Get(TemplatePath(set_args->name));
      if (existing.ok()) {
        DET_RETURN_IF_ERROR(session.Call("PATCH", TemplatePath(set_args->name), config).status());
      } else if (existing.status().code() == StatusCode::kNotFound) {
        json body = {{"name", set_args->name}, {"config", config}, {"workspaceId", 0}};
        DET_RETURN_IF_ERROR(session.Post(TemplatePath(set_args->name), body).status());
      } else {
        return existing.status();
      }
      Print("Set template " + set_args->name + "\n");
      return Status::Ok();
    });
  });

  auto create_args = std::make_shared<NameFile>();
  CLI::App* create = tpl->add_subcommand("create", "create config template");
  create->add_option("TEMPLATE_NAME", create_args->name, "template name")->required();
  create->add_option("TEMPLATE_FILE", create_args->file, "config template file (.yaml)")
      ->required();
  create->add_option("-w,--workspace-name", create_args->workspace,
                     "workspace of the template (default: Uncategorized)");
  create->callback([&ctx, create_args] {
    ctx.SetAction("create template", [&ctx, create_args]() -> Status {
      DET_ASSIGN_OR_RETURN(json config, ReadTemplateFile(create_args->file));
      Session& session = ctx.GetSession();
      int64_t workspace_id = 0;
      if (!create_args->workspace.empty()) {
        DET_ASSIGN_OR_RETURN(workspace_id, WorkspaceIdByName(session, create_args->workspace));
      }
      json body = {{"name", create_args->name}, {"config", config}, {"workspaceId", workspace_id}};
      DET_RETURN_IF_ERROR(session.Post(TemplatePath(create_args->name), body).status());
      Print("Created template " + create_args->name + "\n");
      return Status::Ok();
    });
  });

  auto value_args = std::make_shared<NameFile>();
  CLI::App* set_value = tpl->add_subcommand("set-value", "set template attributes");
  set_value->require_subcommand(1);
  CLI::App* value_config = set_value->add_subcommand("config", "update config template");
  value_config->add_option("TEMPLATE_NAME", value_args->name, "template name")->required();
  value_config->add_option("TEMPLATE_FILE", value_args->file, "config template file (.yaml)")
      ->required();
  value_config->callback([&ctx, value_args] {
    ctx.SetAction("update template", [&ctx, value_args]() -> Status {
      DET_ASSIGN_OR_RETURN(json config, ReadTemplateFile(value_args->file));
      DET_RETURN_IF_ERROR(
          ctx.GetSession().Call("PATCH", TemplatePath(value_args->name), config).status());
      Print("Updated template " + value_args->name + "\n");
      return Status::Ok();
    });
  });

  auto remove_name = std::make_shared<std::string>();
  CLI::App* remove = tpl->add_subcommand("remove", "remove config template")->alias("rm");
  remove->add_option("TEMPLATE_NAME", *remove_name, "template name")->required();
  remove->callback([&ctx, remove_name] {
    ctx.SetAction("remove template", [&ctx, remove_name]() -> Status {
      DET_RETURN_IF_ERROR(
          ctx.GetSession().Call("DELETE", TemplatePath(*remove_name), std::nullopt).status());
      Print("Removed template " + *remove_name + "\n");
      return Status::Ok();
    });
  });
}

}  // namespace det::cli
