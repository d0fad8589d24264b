#include "master/webhooks/match.h"

#include <algorithm>

namespace det::master::webhooks {

using nlohmann::json;

ExperimentWebhooks ExperimentWebhooksOf(const json& config) {
  ExperimentWebhooks out;
  if (!config.is_object()) return out;
  auto integrations = config.find("integrations");
  if (integrations == config.end() || !integrations->is_object()) return out;
  auto hooks = integrations->find("webhooks");
  if (hooks == integrations->end() || !hooks->is_object()) return out;
  if (auto ids = hooks->find("webhook_id"); ids != hooks->end() && ids->is_array()) {
    for (const json& id : *ids) {
      if (id.is_number_integer()) out.ids.push_back(id.get<int64_t>());
    }
  }
  if (auto names = hooks->find("webhook_name"); names != hooks->end() && names->is_array()) {
    for (const json& n : *names) {
      if (n.is_string()) out.names.push_back(n.get<std::string>());
    }
  }
  if (auto ex = hooks->find("exclude"); ex != hooks->end() && ex->is_boolean()) {
    out.exclude = ex->get<bool>();
  }
  return out;
}

namespace {

bool Names(const store::WebhookRow& w, const ExperimentWebhooks& e) {
  return std::find(e.ids.begin(), e.ids.end(), w.id) != e.ids.end() ||
         std::find(e.names.begin(), e.names.end(), w.name) != e.names.end();
}

}  // namespace

bool Reaches(const store::WebhookRow& w, const ExperimentWebhooks* experiment,
             int64_t workspace_id) {
  if (experiment != nullptr && experiment->exclude) return false;
  if (w.workspace_id && *w.workspace_id != workspace_id) return false;
  if (w.mode == "SPECIFIC") return experiment != nullptr && Names(w, *experiment);
  return true;
}

std::vector<const store::WebhookRow*> CustomTargets(const std::vector<store::WebhookRow>& all,
                                                    const ExperimentWebhooks& experiment,
                                                    int64_t workspace_id) {
  std::vector<const store::WebhookRow*> out;
  if (experiment.exclude) return out;
  for (const store::WebhookRow& w : all) {
    if (w.workspace_id && *w.workspace_id != workspace_id) continue;
    if (Names(w, experiment)) out.push_back(&w);
  }
  return out;
}

}  // namespace det::master::webhooks
