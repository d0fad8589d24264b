#include "agent/client/command.h"

#include <charconv>

namespace det::agent {
namespace {

std::string StringField(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

}  // namespace

Result<int64_t> JsonInt64(const nlohmann::json& j) {
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size() && !s.empty()) return v;
  }
  return InvalidArgument("not an integer: " + j.dump());
}

Result<Command> ParseCommand(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("command is not an object");
  auto seq_it = j.find("seq");
  if (seq_it == j.end()) return InvalidArgument("command has no seq");
  Command c;
  DET_ASSIGN_OR_RETURN(c.seq, JsonInt64(*seq_it));
  c.type = StringField(j, "type");
  c.allocation_id = StringField(j, "allocationId");
  if (c.allocation_id.empty()) c.allocation_id = StringField(j, "allocation_id");
  if (c.type != "start" && c.type != "kill" && c.type != "signal") {
    c.parse_error = "unknown command type \"" + c.type + "\"";
    return c;
  }
  if (c.allocation_id.empty()) {
    c.parse_error = c.type + " command has no allocationId";
    return c;
  }
  if (c.type == "signal") {
    c.signal = StringField(j, "signal");
    if (c.signal.empty()) c.parse_error = "signal command has no signal";
    return c;
  }
  if (c.type != "start") return c;
  c.task_id = StringField(j, "taskId");
  if (c.task_id.empty()) c.task_id = StringField(j, "task_id");
  if (c.task_id.empty()) c.parse_error = "start command has no taskId";
  auto slots = j.find("slotIds");
  if (slots == j.end()) slots = j.find("slot_ids");
  if (slots != j.end() && slots->is_array()) {
    for (const auto& s : *slots) {
      auto v = JsonInt64(s);
      if (!v.ok()) {
        c.parse_error = "start command has a bad slot id";
        break;
      }
      c.slot_ids.push_back(static_cast<int>(*v));
    }
  }
  if (auto e = j.find("entrypoint"); e != j.end()) c.entrypoint = *e;
  if (auto ct = j.find("container"); ct != j.end()) c.container = *ct;
  if (auto env = j.find("env"); env != j.end() && env->is_object()) {
    for (const auto& [k, v] : env->items()) {
      c.env[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
  }
  return c;
}

Result<std::vector<Command>> ParseCommandsBody(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return InvalidArgument("commands body is not a json object");
  std::vector<Command> out;
  auto it = j.find("commands");
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) return InvalidArgument("commands is not a list");
  for (const auto& item : *it) {
    DET_ASSIGN_OR_RETURN(Command c, ParseCommand(item));
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace det::agent
