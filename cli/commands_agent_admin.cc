// det agent enable|disable [--drain] [--all] AGENT_ID, det slot enable|disable AGENT_ID SLOT_ID
// (POST /api/v1/agents/{id}/enable|disable, /agents/{id}/slots/{slotId}/enable|disable), with
// the lines Determined's CLI prints; `disable --drain` then lists the tasks still running on the
// drained agents (the `det task list` table).
#include <algorithm>
#include <iostream>
#include <memory>
#include <set>

#include "cli/cli_context.h"
#include "cli/format.h"
#include "cli/table.h"

namespace det::cli {
namespace {

using nlohmann::json;

struct AgentPatchArgs {
  std::string agent_id;
  bool all = false;
  bool drain = false;
  bool json = false;
  bool csv = false;
};

struct SlotPatchArgs {
  std::string agent_id;
  int slot_id = 0;
};

// The agents an allocation summary holds devices on (its resources' agentDevices keys).
std::vector<std::string> AgentsOf(const json& task) {
  std::vector<std::string> out;
  auto res = task.find("resources");
  if (res == task.end() || !res->is_array()) return out;
  for (const json& r : *res) {
    auto devs = r.find("agentDevices");
    if (devs == r.end() || !devs->is_object()) continue;
    for (auto it = devs->begin(); it != devs->end(); ++it) out.push_back(it.key());
  }
  return out;
}

// The "Agent" cell as Determined renders it: the id, a Python list of ids, or "unassigned".
std::string AgentCell(const json& task) {
  if (!task.contains("resources") || task["resources"].is_null()) return "unassigned";
  std::vector<std::string> agents = AgentsOf(task);
  if (agents.size() == 1) return agents[0];
  std::string out = "[";
  for (size_t i = 0; i < agents.size(); ++i) out += (i ? ", '" : "'") + agents[i] + "'";
  return out + "]";
}

std::string PortsCell(const json& task) {
  std::vector<int64_t> ports;
  if (task.contains("proxyPorts") && task["proxyPorts"].is_array()) {
    for (const json& p : task["proxyPorts"]) {
      if (p.is_object() && p.contains("port") && p["port"].is_number_integer()) {
        ports.push_back(p["port"].get<int64_t>());
      }
    }
  }
  std::sort(ports.begin(), ports.end());
  std::string out;
  for (int64_t p : ports) out += (out.empty() ? "" : ",") + std::to_string(p);
  return out;
}

void RenderTasks(const json& tasks, bool as_json, bool csv) {
  if (as_json) {
    Print(tasks.dump(4) + "\n");
    return;
  }
  std::vector<std::pair<std::string, const json*>> sorted;
  for (auto it = tasks.begin(); it != tasks.end(); ++it) {
    sorted.push_back(
        {FormatTime(it.value().value("registeredTime", json())).value_or(""), &it.value()});
  }
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> headers = {"Task ID",      "Allocation ID",   "Name",
                                      "Slots Needed", "Registered Time", "Agent",
                                      "Priority",     "Resource Pool",   "Ports"};
  std::vector<TableRow> rows;
  for (const auto& [time, t] : sorted) {
    bool priority_scheduler = JsonString(*t, "schedulerType") == "priority";
    rows.push_back({JsonString(*t, "taskId"), JsonString(*t, "allocationId"),
                    JsonString(*t, "name"), JsonCell(t->value("slotsNeeded", json())), time,
                    AgentCell(*t),
                    priority_scheduler ? JsonCell(t->value("priority", json())) : "N/A",
                    JsonString(*t, "resourcePool"), PortsCell(*t)});
  }
  Print(csv ? RenderCsv(headers, rows) : RenderPresto(headers, rows) + "\n");
}

Status PatchAgents(CliContext& ctx, const AgentPatchArgs& args, bool enable) {
  const std::string action = enable ? "enable" : "disable";
  if (args.all && !args.agent_id.empty()) {
    return InvalidArgument("pass either an agent id or --all, not both");
  }
  if (!args.all && args.agent_id.empty()) {
    return InvalidArgument("Please pass agent id or --all option. See `det agent " + action +
                           " --help` for details.");
  }
  Session& session = ctx.GetSession();
  std::vector<std::string> ids;
  if (!args.agent_id.empty()) {
    ids.push_back(args.agent_id);
  } else {
    DET_ASSIGN_OR_RETURN(json resp, session.Get("/api/v1/agents"));
    for (const json& a : resp.value("agents", json::array())) ids.push_back(JsonString(a, "id"));
    std::sort(ids.begin(), ids.end());
  }
  bool drain = !enable && args.drain;
  for (const std::string& id : ids) {
    json body = drain ? json{{"drain", true}} : json::object();
    DET_ASSIGN_OR_RETURN(json ignored, session.Post("/api/v1/agents/" + id + "/" + action, body));
    (void)ignored;
    std::cerr << (enable ? "Enabled" : "Disabled") << " agent " << id << ".\n";
  }
  if (!drain) return Status::Ok();
  // What still runs on the drained agents finishes there; show it.
  DET_ASSIGN_OR_RETURN(json resp, session.Get("/api/v1/tasks"));
  json tasks = json::object();
  const std::set<std::string> drained(ids.begin(), ids.end());
  json all = resp.value("allocationIdToSummary", json::object());
  if (all.is_object()) {
    for (auto it = all.begin(); it != all.end(); ++it) {
      for (const std::string& a : AgentsOf(it.value())) {
        if (drained.contains(a)) {
          tasks[it.key()] = it.value();
          break;
        }
      }
    }
  }
  if (!args.json && !args.csv) {
    Print(tasks.empty() ? "No tasks in progress on draining nodes.\n"
                        : "Tasks still in progress on draining nodes.\n");
  }
  RenderTasks(tasks, args.json, args.csv);
  return Status::Ok();
}

Status PatchSlot(CliContext& ctx, const SlotPatchArgs& args, bool enable) {
  const std::string path = "/api/v1/agents/" + args.agent_id + "/slots/" +
                           std::to_string(args.slot_id) + (enable ? "/enable" : "/disable");
  DET_ASSIGN_OR_RETURN(json ignored, ctx.GetSession().Post(path, json::object()));
  (void)ignored;
  Print(std::string(enable ? "Enabled" : "Disabled") + " slot " + std::to_string(args.slot_id) +
        " of agent " + args.agent_id + "\n");
  return Status::Ok();
}

}  // namespace

void RegisterAgentAdminCommands(CLI::App& app, CLI::App& agent, CliContext& ctx) {
  for (bool enable : {true, false}) {
    const std::string name = enable ? "enable" : "disable";
    auto args = std::make_shared<AgentPatchArgs>();
    CLI::App* cmd = agent.add_subcommand(name, name + " agent");
    cmd->add_option("agent_id", args->agent_id, "agent ID");
    cmd->add_flag("--all", args->all, name + " all agents");
    if (!enable) {
      cmd->add_flag("--drain", args->drain,
                    "enter drain mode, allowing the tasks currently running on the disabled "
                    "agents to finish; also prints these tasks, if any");
      auto* j = cmd->add_flag("--json", args->json, "print as JSON");
      auto* c = cmd->add_flag("--csv", args->csv, "print as CSV");
      j->excludes(c);
    }
    cmd->callback([&ctx, args, enable, name] {
      ctx.SetAction(name + " agent",
                    [&ctx, args, enable] { return PatchAgents(ctx, *args, enable); });
    });
  }

  CLI::App* slot = app.add_subcommand("slot", "manage slots")->alias("s");
  slot->require_subcommand(1);
  RegisterSlotListCommand(*slot, ctx);  // list (the default), enable, disable
  for (bool enable : {true, false}) {
    const std::string name = enable ? "enable" : "disable";
    auto args = std::make_shared<SlotPatchArgs>();
    CLI::App* cmd = slot->add_subcommand(name, name + " slot on agent");
    cmd->add_option("agent_id", args->agent_id, "agent ID")->required();
    cmd->add_option("slot_id", args->slot_id, "slot ID")->required()->check(NonNegativeInt());
    cmd->callback([&ctx, args, enable, name] {
      ctx.SetAction(name + " slot", [&ctx, args, enable] { return PatchSlot(ctx, *args, enable); });
    });
  }
}

}  // namespace det::cli
