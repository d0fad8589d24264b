#include "master/server/agent_protocol.h"

namespace det::master::server {

using nlohmann::json;

json CommandJson(const AgentCommand& command) {
  if (const auto* kill = std::get_if<KillCommand>(&command)) {
    return {{"type", "kill"}, {"allocationId", kill->allocation_id}};
  }
  const auto& start = std::get<StartCommand>(command);
  json j = {
      {"type", "start"},           {"allocationId", start.allocation_id}, {"taskId", start.task_id},
      {"slotIds", start.slot_ids}, {"entrypoint", start.entrypoint},      {"env", start.env}};
  if (!start.task_type.empty()) j["taskType"] = start.task_type;
  if (start.container) j["container"] = *start.container;
  return j;
}

Result<std::vector<AgentEvent>> ParseAgentEvents(const json& body) {
  if (!body.is_object() || (body.contains("events") && !body["events"].is_array())) {
    return InvalidArgument("events: must be an object {\"events\": [...]}");
  }
  std::vector<AgentEvent> out;
  for (const json& ev : body.value("events", json::array())) {
    if (!ev.is_object() || (ev.contains("allocationId") && !ev["allocationId"].is_string()) ||
        (ev.contains("type") && !ev["type"].is_string()) ||
        (ev.contains("exitCode") && !ev["exitCode"].is_number_integer()) ||
        (ev.contains("error") && !ev["error"].is_string())) {
      return InvalidArgument(
          "events: each event must be an object with string type and allocationId and an "
          "integer exitCode (got " +
          ev.dump().substr(0, 200) + ")");
    }
    AgentEvent e;
    std::string type = ev.value("type", "");
    e.type = type == "started"  ? AgentEvent::Type::kStarted
             : type == "exited" ? AgentEvent::Type::kExited
                                : AgentEvent::Type::kOther;
    e.allocation_id = ev.value("allocationId", "");
    e.exit_code = ev.value("exitCode", -1);
    e.error = ev.value("error", std::string());
    e.raw = ev;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace det::master::server
