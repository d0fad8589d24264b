// det webhook list | create | update | delete | test: webhooks (/api/v1/webhooks). Determined
// 0.38 manages them in its web UI only; these commands take the same fields.
#include <map>
#include <memory>
#include <vector>

#include "cli/cli_context.h"
#include "cli/table.h"
#include "cli/workspace_lookup.h"
#include "common/http_client.h"

namespace det::cli {
namespace {

using json = nlohmann::json;

struct CreateArgs {
  std::string url;
  std::string type = "default";
  std::string mode = "workspace";
  std::string name;
  std::string workspace;
  std::vector<std::string> states;
  std::vector<std::string> regexes;
  bool custom = false;
};

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string Strip(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0 ? s.substr(prefix.size()) : s;
}

std::string TriggersText(const json& triggers) {
  std::string out;
  for (const json& t : triggers) {
    std::string type = Strip(t.value("triggerType", ""), "TRIGGER_TYPE_");
    std::string text = type;
    const json& c = t.value("condition", json::object());
    if (c.contains("state") && c["state"].is_string()) text += " " + c["state"].get<std::string>();
    if (c.contains("regex") && c["regex"].is_string())
      text += " /" + c["regex"].get<std::string>() + "/";
    out += (out.empty() ? "" : ", ") + text;
  }
  return out;
}

Status ListWebhooks(CliContext& ctx) {
  Session& session = ctx.GetSession();
  DET_ASSIGN_OR_RETURN(json resp, session.Get("/api/v1/webhooks"));
  DET_ASSIGN_OR_RETURN(auto names, WorkspaceNames(session));
  std::vector<TableRow> rows;
  for (const json& w : resp.value("webhooks", json::array())) {
    int64_t ws = w.value("workspaceId", int64_t{0});
    auto it = names.find(ws);
    rows.push_back(
        {std::to_string(w.value("id", int64_t{0})), w.value("name", ""),
         Strip(w.value("webhookType", ""), "WEBHOOK_TYPE_"),
         Strip(w.value("mode", ""), "WEBHOOK_MODE_"),
         ws == 0 ? std::string("(global)") : (it == names.end() ? std::to_string(ws) : it->second),
         w.value("url", ""), TriggersText(w.value("triggers", json::array()))});
  }
  Print(RenderPresto({"ID", "Name", "Type", "Mode", "Workspace", "URL", "Triggers"}, rows) + "\n");
  return Status::Ok();
}

Status CreateWebhook(CliContext& ctx, const CreateArgs& a) {
  json triggers = json::array();
  for (const std::string& s : a.states) {
    triggers.push_back({{"triggerType", "TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE"},
                        {"condition", {{"state", Upper(s)}}}});
  }
  for (const std::string& r : a.regexes) {
    triggers.push_back({{"triggerType", "TRIGGER_TYPE_TASK_LOG"}, {"condition", {{"regex", r}}}});
  }
  if (a.custom)
    triggers.push_back({{"triggerType", "TRIGGER_TYPE_CUSTOM"}, {"condition", json::object()}});
  if (triggers.empty()) {
    return InvalidArgument(
        "give at least one trigger: --state STATE, --log-regex REGEX or --custom");
  }
  Session& session = ctx.GetSession();
  int64_t workspace_id = 0;
  if (!a.workspace.empty()) {
    DET_ASSIGN_OR_RETURN(workspace_id, WorkspaceIdByName(session, a.workspace));
  }
  json body = {{"url", a.url},
               {"webhookType", "WEBHOOK_TYPE_" + Upper(a.type)},
               {"mode", "WEBHOOK_MODE_" + Upper(a.mode)},
               {"name", a.name},
               {"workspaceId", workspace_id},
               {"triggers", triggers}};
  DET_ASSIGN_OR_RETURN(json resp, session.Post("/api/v1/webhooks", body));
  Print("Created webhook " +
        std::to_string(resp.value("webhook", json::object()).value("id", int64_t{0})) + "\n");
  return Status::Ok();
}

}  // namespace

void RegisterWebhookCommands(CLI::App& app, CliContext& ctx) {
  CLI::App* hook = app.add_subcommand("webhook", "manage webhooks");
  hook->require_subcommand(1);

  CLI::App* list = hook->add_subcommand("list", "list webhooks")->alias("ls");
  list->callback([&ctx] { ctx.SetAction("list webhooks", [&ctx] { return ListWebhooks(ctx); }); });

  auto a = std::make_shared<CreateArgs>();
  CLI::App* create = hook->add_subcommand("create", "create a webhook");
  create->add_option("URL", a->url, "where deliveries are posted")->required();
  create->add_option("-t,--type", a->type, "default (Determined's event JSON) or slack")
      ->check(CLI::IsMember({"default", "slack"}, CLI::ignore_case));
  create
      ->add_option("-m,--mode", a->mode,
                   "workspace (every experiment it can hear) or specific (experiments naming it "
                   "in integrations.webhooks)")
      ->check(CLI::IsMember({"workspace", "specific"}, CLI::ignore_case));
  create->add_option("-n,--name", a->name, "its name (experiments name it in webhook_name)");
  create->add_option("-w,--workspace-name", a->workspace, "its workspace (default: global)");
  create->add_option("--state", a->states, "trigger: an experiment reaching STATE (repeatable)");
  create->add_option("--log-regex", a->regexes,
                     "trigger: a task log line matching REGEX (repeatable)");
  create->add_flag("--custom", a->custom, "trigger: core_context.alert() (mode specific)");
  create->callback(
      [&ctx, a] { ctx.SetAction("create webhook", [&ctx, a] { return CreateWebhook(ctx, *a); }); });

  auto update_id = std::make_shared<int64_t>(0);
  auto update_url = std::make_shared<std::string>();
  CLI::App* update = hook->add_subcommand("update", "change a webhook's URL");
  update->add_option("WEBHOOK_ID", *update_id, "webhook id")->required();
  update->add_option("--url", *update_url, "its new URL")->required();
  update->callback([&ctx, update_id, update_url] {
    ctx.SetAction("update webhook", [&ctx, update_id, update_url]() -> Status {
      std::string path = "/api/v1/webhooks/" + std::to_string(*update_id);
      DET_RETURN_IF_ERROR(
          ctx.GetSession().Call("PATCH", path, json{{"url", *update_url}}).status());
      Print("Updated webhook " + std::to_string(*update_id) + "\n");
      return Status::Ok();
    });
  });

  auto delete_id = std::make_shared<int64_t>(0);
  CLI::App* del = hook->add_subcommand("delete", "delete a webhook")->alias("rm");
  del->add_option("WEBHOOK_ID", *delete_id, "webhook id")->required();
  del->callback([&ctx, delete_id] {
    ctx.SetAction("delete webhook", [&ctx, delete_id]() -> Status {
      std::string path = "/api/v1/webhooks/" + std::to_string(*delete_id);
      DET_RETURN_IF_ERROR(ctx.GetSession().Call("DELETE", path, std::nullopt).status());
      Print("Deleted webhook " + std::to_string(*delete_id) + "\n");
      return Status::Ok();
    });
  });

  auto test_id = std::make_shared<int64_t>(0);
  CLI::App* test = hook->add_subcommand("test", "post a test event to a webhook");
  test->add_option("WEBHOOK_ID", *test_id, "webhook id")->required();
  test->callback([&ctx, test_id] {
    ctx.SetAction("test webhook", [&ctx, test_id]() -> Status {
      std::string path = "/api/v1/webhooks/" + std::to_string(*test_id) + "/test";
      DET_RETURN_IF_ERROR(ctx.GetSession().Post(path, json::object()).status());
      Print("Webhook " + std::to_string(*test_id) + " took the test event\n");
      return Status::Ok();
    });
  });
}

}  // namespace det::cli
