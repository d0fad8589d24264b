// POST /api/v1/webhooks/custom: what core.Context.alert() sends. This master has no webhook
// registry yet, so the alert is kept where the trial's user looks: a line of the trial's logs at
// the alert's level.
#include <set>

#include "master/api/route_helpers.h"
#include "master/api/routes.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::Principal;

namespace {

const std::set<std::string>& AlertLevels() {
  static const std::set<std::string> levels = {
      "LOG_LEVEL_UNSPECIFIED", "LOG_LEVEL_TRACE", "LOG_LEVEL_DEBUG",   "LOG_LEVEL_INFO",
      "LOG_LEVEL_WARNING",     "LOG_LEVEL_ERROR", "LOG_LEVEL_CRITICAL"};
  return levels;
}

std::string StringField(const json& obj, const char* camel, const char* snake) {
  const json* f = Field(obj, camel, snake);
  return f != nullptr && f->is_string() ? f->get<std::string>() : "";
}

}  // namespace

void RegisterWebhookRoutes(server::Router* router, server::Master* master) {
  router->Add("POST", "/api/v1/webhooks/custom",
              WithAuth(master, TrialChecked(), [master](HttpRequest& req, const Principal& who) {
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                const json* data = Field(*body, "data", "data");
                if (data == nullptr || !data->is_object()) {
                  return ErrorResponse(
                      InvalidArgument("data: required object {title, description, level}"));
                }
                std::string level = StringField(*data, "level", "level");
                if (level.empty()) level = "LOG_LEVEL_INFO";
                if (!AlertLevels().count(level)) {
                  return ErrorResponse(
                      InvalidArgument("data.level: \"" + level + "\" is not a LOG_LEVEL_* value"));
                }
                int64_t trial_id = who.trial_id;
                std::string task_id;
                if (!who.is_allocation) {
                  const json* t = Field(*body, "trialId", "trial_id");
                  if (t == nullptr || !t->is_number_integer() || t->get<int64_t>() <= 0) {
                    return ErrorResponse(InvalidArgument("trialId: required positive integer"));
                  }
                  trial_id = t->get<int64_t>();
                  // A user posts alerts for trials of experiments they own (or any, as an admin).
                  if (Status st = AuthorizeTrialReport(master, who, trial_id); !st.ok()) {
                    return ErrorResponse(st);
                  }
                  Result<server::TrialView> trial = master->experiments()->GetTrial(trial_id);
                  if (!trial.ok()) return ErrorResponse(trial.status());
                  if (!trial->task_ids.empty()) task_id = trial->task_ids.back();
                }
                store::TaskLogRow row;
                row.trial_id = trial_id;
                row.task_id = task_id;
                row.level = level == "LOG_LEVEL_UNSPECIFIED" ? "LOG_LEVEL_INFO" : level;
                row.stdtype = "stdout";
                row.source = "alert";
                std::string description = StringField(*data, "description", "description");
                row.log = "alert: " + StringField(*data, "title", "title") +
                          (description.empty() ? "" : ": " + description) + "\n";
                Status st = master->experiments()->AddTaskLogs(who, {row});
                return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
              }));
}

}  // namespace det::master::api
