#pragma once
// Rendering of master records into Determined's /api/v1 JSON shapes (lowerCamelCase keys,
// STATE_* enums, RFC 3339 times). Pure functions of their inputs.

#include <nlohmann/json.hpp>

#include "master/server/master.h"
#include "master/store/store.h"

namespace det::master::api {

// `master_task_defaults`: the master's task_container_defaults, whose environment variables
// are masked in the config shown (core::ShownConfig).
nlohmann::json ExperimentJson(const server::ExperimentView& v,
                              const nlohmann::json& master_task_defaults);
nlohmann::json TrialJson(const server::TrialView& v);
nlohmann::json CheckpointJson(const store::CheckpointRow& c, const nlohmann::json& training);
nlohmann::json MetricsJson(const store::MetricRow& m);
nlohmann::json TrialLogJson(const store::TaskLogRow& r);
nlohmann::json UserJson(const store::UserRow& u);
nlohmann::json AgentJson(const server::AgentView& a);
// One slot of an agent (`a.slots` element) as Determined's v1Slot.
nlohmann::json SlotJson(const server::AgentView& a, const nlohmann::json& slot);
nlohmann::json PaginationJson(int64_t offset, int64_t limit, int64_t count, int64_t total);
std::string TimeOrNull(std::optional<int64_t> micros);

}  // namespace det::master::api
