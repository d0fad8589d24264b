#pragma once
// Which webhooks an event reaches (Determined's rules): a webhook with a workspace hears only
// that workspace's experiments and tasks; a WORKSPACE-mode one hears every experiment it can;
// a SPECIFIC-mode one only experiments whose config names it (integrations.webhooks.webhook_id
// or webhook_name); `integrations.webhooks.exclude: true` opts an experiment out of all. Pure.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "master/store/store.h"

namespace det::master::webhooks {

// integrations.webhooks of an experiment's config.
struct ExperimentWebhooks {
  std::vector<int64_t> ids;
  std::vector<std::string> names;
  bool exclude = false;
};

ExperimentWebhooks ExperimentWebhooksOf(const nlohmann::json& config);

// `experiment`: the experiment the event is about (null for a task that is not a trial).
bool Reaches(const store::WebhookRow& w, const ExperimentWebhooks* experiment,
             int64_t workspace_id);

// The webhooks a CUSTOM event (core_context.alert()) of an experiment reaches: those its config
// names by id or by name that are global or in its workspace, each once, in id order.
std::vector<const store::WebhookRow*> CustomTargets(const std::vector<store::WebhookRow>& all,
                                                    const ExperimentWebhooks& experiment,
                                                    int64_t workspace_id);

}  // namespace det::master::webhooks
