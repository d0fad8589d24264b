// det master info, det agent list.
#include <algorithm>
#include <memory>

#include "cli/cli_context.h"
#include "cli/format.h"
#include "cli/table.h"
#include "cli/yaml_render.h"

namespace det::cli {
namespace {

Status MasterInfo(CliContext& ctx, bool json) {
  DET_ASSIGN_OR_RETURN(nlohmann::json info, ctx.GetSession().GetUnauthenticated("/info"));
  if (json) {
    Print(info.dump(4) + "\n");
    return Status::Ok();
  }
  std::vector<TableRow> rows;
  if (info.is_object()) {
    for (auto it = info.begin(); it != info.end(); ++it) {
      rows.push_back({it.key(), JsonCell(it.value())});
    }
  }
  Print(RenderPresto({"Field", "Value"}, rows) + "\n");
  return Status::Ok();
}

int CountContainers(const nlohmann::json& agent) {
  int n = 0;
  auto slots = agent.find("slots");
  if (slots == agent.end() || !slots->is_object()) return 0;
  for (const auto& slot : *slots) {
    if (slot.is_object() && slot.contains("container") && !slot["container"].is_null()) ++n;
  }
  return n;
}

Status AgentList(CliContext& ctx, bool json, bool csv) {
  DET_ASSIGN_OR_RETURN(nlohmann::json resp, ctx.GetSession().Get("/api/v1/agents"));
  nlohmann::json agents = resp.value("agents", nlohmann::json::array());
  if (!agents.is_array()) agents = nlohmann::json::array();
  std::sort(agents.begin(), agents.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return JsonString(a, "id") < JsonString(b, "id");
  });
  if (json) {
    Print(agents.dump(4) + "\n");
    return Status::Ok();
  }
  std::vector<std::string> headers = {"Agent ID",      "Registered Time", "Num Slots",
                                      "Num Containers", "Resource Pool",  "Enabled",
                                      "Draining",       "Connected",      "Addresses"};
  std::vector<TableRow> rows;
  for (const nlohmann::json& a : agents) {
    size_t num_slots = a.contains("slots") && a["slots"].is_object() ? a["slots"].size() : 0;
    std::string pool = JsonString(a, "resourcePool");
    if (pool.empty() && a.contains("resourcePools") && a["resourcePools"].is_array()) {
      for (const auto& p : a["resourcePools"]) {
        if (!pool.empty()) pool += ", ";
        pool += p.is_string() ? p.get<std::string>() : p.dump();
      }
    }
    rows.push_back({JsonString(a, "id"), FormatTime(a.value("registeredTime", nlohmann::json())),
                    std::to_string(num_slots), std::to_string(CountContainers(a)), pool,
                    JsonCell(a.value("enabled", nlohmann::json(true))),
                    JsonCell(a.value("draining", nlohmann::json(false))),
                    JsonCell(a.value("connected", nlohmann::json(true))),
                    JsonString(a, "hostname")});
  }
  Print(csv ? RenderCsv(headers, rows) : RenderPresto(headers, rows) + "\n");
  return Status::Ok();
}

}  // namespace

void RegisterMasterCommands(CLI::App& app, CliContext& ctx) {
  CLI::App* master = app.add_subcommand("master", "inspect the master");  // `det m` is `det model`
  master->require_subcommand(1);
  auto info_json = std::make_shared<bool>(false);
  CLI::App* info = master->add_subcommand("info", "print the master's information");
  info->add_flag("--json", *info_json, "print JSON");
  info->callback([&ctx, info_json] {
    ctx.SetAction("get master info", [&ctx, info_json] { return MasterInfo(ctx, *info_json); });
  });

  // cluster-message set | clear | get (admins; every user sees the active one in master info).
  struct MessageArgs {
    std::string message, start, end, duration;
    bool clear_all = false, json = false, yaml = false;
  };
  auto m = std::make_shared<MessageArgs>();
  CLI::App* msg = master->add_subcommand("cluster-message", "set or clear cluster-wide message");
  msg->require_subcommand(1);
  CLI::App* set = msg->add_subcommand("set", "create or edit the displayed cluster-wide message");
  set->add_option("-s,--start", m->start,
                  "timestamp to start displaying the message (RFC 3339), default now");
  CLI::Option* end = set->add_option("-e,--end", m->end,
                                     "timestamp to stop displaying it (RFC 3339), default never");
  set->add_option("-d,--duration", m->duration, "how long it lasts, e.g. 24h, 5d, 2w")
      ->excludes(end);
  set->add_option("-m,--message", m->message, "text of the message to display to users");
  set->callback([&ctx, m] {
    ctx.SetAction("set cluster message", [&ctx, m]() -> Status {
      if (m->message.empty()) return InvalidArgument("Provide a message using the -m flag.");
      nlohmann::json body = {{"message", m->message}};
      if (!m->start.empty()) body["startTime"] = m->start;
      if (!m->end.empty()) body["endTime"] = m->end;
      if (!m->duration.empty()) body["duration"] = m->duration;
      return ctx.GetSession().Call("PUT", "/api/v1/master/cluster_message", body).status();
    });
  });
  CLI::App* clear = msg->add_subcommand("clear", "clear cluster-wide message");
  clear->add_flag("-c,--clear", m->clear_all, "clear all cluster-wide messages");
  clear->callback([&ctx] {
    ctx.SetAction("clear cluster message", [&ctx]() -> Status {
      return ctx.GetSession()
          .Call("DELETE", "/api/v1/master/cluster_message", std::nullopt)
          .status();
    });
  });
  CLI::App* get = msg->add_subcommand("get", "get cluster-wide message");
  CLI::Option* as_json = get->add_flag("--json", m->json, "print JSON");
  get->add_flag("--yaml", m->yaml, "print YAML")->excludes(as_json);
  get->callback([&ctx, m] {
    ctx.SetAction("get cluster message", [&ctx, m]() -> Status {
      DET_ASSIGN_OR_RETURN(nlohmann::json resp,
                           ctx.GetSession().Get("/api/v1/master/cluster_message"));
      if (!resp.contains("clusterMessage")) resp["clusterMessage"] = nullptr;
      Print(m->json ? resp.dump(4) + "\n" : RenderYaml(resp));
      return Status::Ok();
    });
  });

  CLI::App* agent = app.add_subcommand("agent", "inspect agents")->alias("a");
  agent->require_subcommand(1);
  auto list_json = std::make_shared<bool>(false);
  auto list_csv = std::make_shared<bool>(false);
  CLI::App* list = agent->add_subcommand("list", "list the agents")->alias("ls");
  list->add_flag("--json", *list_json, "print JSON");
  list->add_flag("--csv", *list_csv, "print CSV");
  list->callback([&ctx, list_json, list_csv] {
    ctx.SetAction("list agents",
                  [&ctx, list_json, list_csv] { return AgentList(ctx, *list_json, *list_csv); });
  });
  RegisterAgentAdminCommands(app, *agent, ctx);  // agent enable|disable, slot enable|disable
}

}  // namespace det::cli
