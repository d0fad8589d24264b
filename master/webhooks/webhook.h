#pragma once
// Webhooks as Determined's API shows them: the checks a new webhook passes (POST
// /api/v1/webhooks, PATCH /api/v1/webhooks/{id}) and its JSON. Pure: no store, clock or I/O.
//
// In the API, types, modes and trigger types carry Determined's enum names
// (WEBHOOK_TYPE_SLACK, WEBHOOK_MODE_SPECIFIC, TRIGGER_TYPE_TASK_LOG); the store keeps them
// without the prefix, as Determined's database does (SLACK, SPECIFIC, TASK_LOG). Both forms are
// accepted on input.

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "master/store/store.h"

namespace det::master::webhooks {

inline constexpr size_t kMaxUrlBytes = 2048;
inline constexpr size_t kMaxNameBytes = 256;
inline constexpr size_t kMaxTriggers = 16;
inline constexpr size_t kMaxRegexBytes = 1024;

// A new webhook from a POST body ({url, webhookType, triggers, mode, name, workspaceId}); an
// error names the field, the value and the rule. Ids are left 0.
Result<store::WebhookRow> ParseWebhook(const nlohmann::json& body);
// The url of a PATCH body ({url}).
Result<std::string> ParseWebhookPatch(const nlohmann::json& body);
// An http:// or https:// URL with a host.
Status CheckWebhookUrl(const std::string& url, const std::string& field);

nlohmann::json WebhookJson(const store::WebhookRow& w);

// The regex of a TASK_LOG trigger ("" for other types).
std::string TriggerRegex(const store::WebhookTriggerRow& t);

}  // namespace det::master::webhooks
