// Webhooks: GET/POST /api/v1/webhooks, PATCH/DELETE /api/v1/webhooks/{id}, POST
// /api/v1/webhooks/{id}/test (WebhookService checks who may, on the webhook's workspace), and
// POST /api/v1/webhooks/custom, what core.Context.alert() sends: the alert is kept as a line of
// the trial's logs at its level and delivered to the CUSTOM triggers of the webhooks its
// experiment's config names.
#include <set>

#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/server/webhook_service.h"
#include "master/webhooks/webhook.h"

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

server::HttpResponse Empty(const Status& st) {
  return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
}

}  // namespace

void RegisterWebhookRoutes(server::Router* router, server::Master* master) {
  server::WebhookService* hooks = master->webhooks();
  const Access checked = Checked(core::Action::kModify);
  router->Add(
      "GET", "/api/v1/webhooks",
      WithAuth(master, Checked(core::Action::kRead), [hooks](HttpRequest&, const Principal& who) {
        auto rows = hooks->List(who);
        if (!rows.ok()) return ErrorResponse(rows.status());
        json out = json::array();
        for (const store::WebhookRow& w : *rows) out.push_back(webhooks::WebhookJson(w));
        return JsonResponse({{"webhooks", out}});
      }));
  router->Add("POST", "/api/v1/webhooks",
              WithAuth(master, checked, [hooks](HttpRequest& req, const Principal& who) {
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                // Determined's body is the webhook itself; {"webhook": {...}} is taken too.
                const json& w = body->contains("webhook") ? (*body)["webhook"] : *body;
                auto created = hooks->Create(who, w);
                if (!created.ok()) return ErrorResponse(created.status());
                return JsonResponse({{"webhook", webhooks::WebhookJson(*created)}});
              }));
  router->Add("PATCH", "/api/v1/webhooks/{id}",
              WithAuth(master, checked, [hooks](HttpRequest& req, const Principal& who) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                const json& w = body->contains("webhook") ? (*body)["webhook"] : *body;
                return Empty(hooks->PatchUrl(who, *id, w));
              }));
  router->Add("DELETE", "/api/v1/webhooks/{id}",
              WithAuth(master, checked, [hooks](HttpRequest& req, const Principal& who) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                return Empty(hooks->Delete(who, *id));
              }));
  router->Add("POST", "/api/v1/webhooks/{id}/test",
              WithAuth(master, checked, [hooks](HttpRequest& req, const Principal& who) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                return Empty(hooks->Test(who, *id));
              }));
  router->Add(
      "POST", "/api/v1/webhooks/custom",
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
        }
        Result<server::TrialView> trial = master->experiments()->GetTrial(trial_id);
        if (!trial.ok()) return ErrorResponse(trial.status());
        if (!who.is_allocation && !trial->task_ids.empty()) task_id = trial->task_ids.back();
        store::TaskLogRow row;
        row.trial_id = trial_id;
        row.task_id = task_id;
        row.level = level == "LOG_LEVEL_UNSPECIFIED" ? "LOG_LEVEL_INFO" : level;
        row.stdtype = "stdout";
        row.source = "alert";
        std::string title = StringField(*data, "title", "title");
        std::string description = StringField(*data, "description", "description");
        row.log = "alert: " + title + (description.empty() ? "" : ": " + description) + "\n";
        if (Status st = master->experiments()->AddTaskLogs(who, {row}); !st.ok()) {
          return ErrorResponse(st);
        }
        webhooks::CustomData custom{title, description, level};
        return Empty(master->webhooks()->QueueCustom(trial->row.experiment_id, trial_id, custom));
      }));
}

}  // namespace det::master::api
