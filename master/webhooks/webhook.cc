#include "master/webhooks/webhook.h"

#include <re2/re2.h>

#include <array>
#include <string_view>

#include "master/core/states.h"

namespace det::master::webhooks {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 2> kTypes = {"DEFAULT", "SLACK"};
constexpr std::array<std::string_view, 2> kModes = {"WORKSPACE", "SPECIFIC"};
constexpr std::array<std::string_view, 3> kTriggerTypes = {"EXPERIMENT_STATE_CHANGE", "TASK_LOG",
                                                           "CUSTOM"};

const json* Get(const json& obj, const char* camel, const char* snake) {
  if (obj.contains(camel)) return &obj[camel];
  if (obj.contains(snake)) return &obj[snake];
  return nullptr;
}

// `value` without Determined's enum prefix, when it is one of `names`.
template <size_t N>
Result<std::string> EnumValue(const json& value, std::string_view prefix,
                              const std::array<std::string_view, N>& names, const char* field) {
  if (!value.is_string()) {
    return InvalidArgument(std::string(field) + ": must be a string, got " + value.dump());
  }
  std::string_view s = value.get_ref<const std::string&>();
  if (s.starts_with(prefix)) s.remove_prefix(prefix.size());
  for (std::string_view n : names) {
    if (s == n) return std::string(n);
  }
  std::string allowed;
  for (std::string_view n : names)
    allowed += (allowed.empty() ? "" : ", ") + std::string(prefix) + std::string(n);
  return InvalidArgument(std::string(field) + ": " + value.dump() + " is not one of " + allowed);
}

Status CheckTrigger(const json& t, size_t i, const std::string& mode,
                    store::WebhookTriggerRow* out) {
  std::string path = "triggers[" + std::to_string(i) + "]";
  if (!t.is_object()) return InvalidArgument(path + ": must be an object, got " + t.dump());
  const json* type = Get(t, "triggerType", "trigger_type");
  if (type == nullptr) return InvalidArgument(path + ".triggerType: required");
  if (type->is_string() &&
      (*type == "TRIGGER_TYPE_METRIC_THRESHOLD_EXCEEDED" || *type == "METRIC_THRESHOLD_EXCEEDED")) {
    return InvalidArgument(path + ".triggerType: " + type->dump() +
                           " is not supported (Determined defines it but never sends it)");
  }
  DET_ASSIGN_OR_RETURN(out->trigger_type, EnumValue(*type, "TRIGGER_TYPE_", kTriggerTypes,
                                                    (path + ".triggerType").c_str()));
  const json* condition = Get(t, "condition", "condition");
  json c = condition == nullptr || condition->is_null() ? json::object() : *condition;
  if (!c.is_object()) {
    return InvalidArgument(path + ".condition: must be an object, got " + c.dump());
  }
  if (out->trigger_type == "EXPERIMENT_STATE_CHANGE") {
    if (c.size() != 1 || !c.contains("state") || !c["state"].is_string()) {
      return InvalidArgument(path + ".condition: must be {\"state\": <experiment state>}, got " +
                             c.dump());
    }
    std::optional<core::RunState> state = core::ParseRunState(c["state"].get<std::string>());
    if (!state) {
      return InvalidArgument(path + ".condition.state: " + c["state"].dump() +
                             " is not an experiment state (COMPLETED, ERROR, CANCELED, ...)");
    }
    c["state"] = std::string(core::RunStateName(*state));
  } else if (out->trigger_type == "TASK_LOG") {
    if (c.size() != 1 || !c.contains("regex") || !c["regex"].is_string()) {
      return InvalidArgument(path + ".condition: must be {\"regex\": <string>}, got " + c.dump());
    }
    const std::string& regex = c["regex"].get_ref<const std::string&>();
    if (regex.size() > kMaxRegexBytes) {
      return InvalidArgument(path + ".condition.regex: " + std::to_string(regex.size()) +
                             " bytes, more than " + std::to_string(kMaxRegexBytes));
    }
    RE2 re(regex, RE2::Quiet);
    if (!re.ok()) {
      return InvalidArgument(path + ".condition.regex: \"" + regex +
                             "\" is not a valid regular expression (RE2 syntax): " + re.error());
    }
  } else if (out->trigger_type == "CUSTOM") {
    if (mode != "SPECIFIC") {
      return InvalidArgument(path + ": a CUSTOM trigger needs mode WEBHOOK_MODE_SPECIFIC, got " +
                             "WEBHOOK_MODE_" + mode);
    }
  }
  out->condition = std::move(c);
  return Status::Ok();
}

}  // namespace

Status CheckWebhookUrl(const std::string& url, const std::string& field) {
  if (url.size() > kMaxUrlBytes) {
    return InvalidArgument(field + ": " + std::to_string(url.size()) + " bytes, more than " +
                           std::to_string(kMaxUrlBytes));
  }
  std::string_view rest = url;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
  } else {
    return InvalidArgument(field + ": \"" + url + "\" is not an http:// or https:// URL");
  }
  if (rest.empty() || rest.front() == '/' || rest.front() == ':') {
    return InvalidArgument(field + ": \"" + url + "\" has no host");
  }
  for (char ch : url) {
    if (static_cast<unsigned char>(ch) <= ' ' || ch == 0x7f) {
      return InvalidArgument(field + ": \"" + url + "\" holds a space or control character");
    }
  }
  return Status::Ok();
}

Result<store::WebhookRow> ParseWebhook(const json& body) {
  if (!body.is_object()) return InvalidArgument("webhook: must be an object, got " + body.dump());
  store::WebhookRow w;
  const json* url = Get(body, "url", "url");
  if (url == nullptr || !url->is_string()) return InvalidArgument("url: required string");
  w.url = url->get<std::string>();
  DET_RETURN_IF_ERROR(CheckWebhookUrl(w.url, "url"));
  const json* type = Get(body, "webhookType", "webhook_type");
  if (type == nullptr)
    return InvalidArgument("webhookType: required (WEBHOOK_TYPE_DEFAULT or WEBHOOK_TYPE_SLACK)");
  DET_ASSIGN_OR_RETURN(w.webhook_type, EnumValue(*type, "WEBHOOK_TYPE_", kTypes, "webhookType"));
  const json* mode = Get(body, "mode", "mode");
  if (mode == nullptr || mode->is_null() || *mode == "WEBHOOK_MODE_UNSPECIFIED") {
    w.mode = "WORKSPACE";
  } else {
    DET_ASSIGN_OR_RETURN(w.mode, EnumValue(*mode, "WEBHOOK_MODE_", kModes, "mode"));
  }
  if (const json* name = Get(body, "name", "name"); name != nullptr && !name->is_null()) {
    if (!name->is_string()) return InvalidArgument("name: must be a string, got " + name->dump());
    w.name = name->get<std::string>();
    if (w.name.size() > kMaxNameBytes) {
      return InvalidArgument("name: " + std::to_string(w.name.size()) + " bytes, more than " +
                             std::to_string(kMaxNameBytes));
    }
  }
  if (const json* ws = Get(body, "workspaceId", "workspace_id"); ws != nullptr && !ws->is_null()) {
    if (!ws->is_number_integer() || ws->get<int64_t>() < 0) {
      return InvalidArgument("workspaceId: must be a workspace id (0 or absent: global), got " +
                             ws->dump());
    }
    if (ws->get<int64_t>() > 0) w.workspace_id = ws->get<int64_t>();
  }
  const json* triggers = Get(body, "triggers", "triggers");
  if (triggers == nullptr || !triggers->is_array() || triggers->empty()) {
    return InvalidArgument("triggers: at least one trigger required");
  }
  if (triggers->size() > kMaxTriggers) {
    return InvalidArgument("triggers: " + std::to_string(triggers->size()) +
                           " triggers, more than " + std::to_string(kMaxTriggers));
  }
  for (size_t i = 0; i < triggers->size(); ++i) {
    store::WebhookTriggerRow t;
    DET_RETURN_IF_ERROR(CheckTrigger((*triggers)[i], i, w.mode, &t));
    w.triggers.push_back(std::move(t));
  }
  return w;
}

Result<std::string> ParseWebhookPatch(const json& body) {
  if (!body.is_object()) return InvalidArgument("webhook: must be an object, got " + body.dump());
  const json* url = Get(body, "url", "url");
  if (url == nullptr || !url->is_string()) return InvalidArgument("url: required string");
  DET_RETURN_IF_ERROR(CheckWebhookUrl(url->get<std::string>(), "url"));
  return url->get<std::string>();
}

json WebhookJson(const store::WebhookRow& w) {
  json triggers = json::array();
  for (const store::WebhookTriggerRow& t : w.triggers) {
    triggers.push_back({{"id", t.id},
                        {"triggerType", "TRIGGER_TYPE_" + t.trigger_type},
                        {"condition", t.condition},
                        {"webhookId", t.webhook_id}});
  }
  return {{"id", w.id},
          {"url", w.url},
          {"triggers", triggers},
          {"webhookType", "WEBHOOK_TYPE_" + w.webhook_type},
          {"name", w.name},
          {"workspaceId", w.workspace_id.value_or(0)},
          {"mode", "WEBHOOK_MODE_" + w.mode}};
}

std::string TriggerRegex(const store::WebhookTriggerRow& t) {
  if (t.trigger_type != "TASK_LOG") return "";
  auto it = t.condition.find("regex");
  return it != t.condition.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace det::master::webhooks
