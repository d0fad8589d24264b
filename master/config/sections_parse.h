#pragma once
// The smaller top-level sections: optimizations, profiling, data_layer (legacy) and
// log_policies. Each validates its fields and returns the section with every default filled.
// Internal to master/config.

#include <nlohmann/json.hpp>

#include "master/config/problems.h"

namespace det::master::config::internal {

nlohmann::json ParseOptimizations(const nlohmann::json& in, Problems* problems);
nlohmann::json ParseProfiling(const nlohmann::json& in, Problems* problems);
nlohmann::json ParseDataLayer(const nlohmann::json& in, Problems* problems);
// `task_default` (ConfigDefaults::task_container_defaults.log_policies) replaces the built-in
// defaults (CUDA OOM, ECC error) when set; an experiment's own list replaces both.
nlohmann::json ParseLogPolicies(const nlohmann::json& in, const nlohmann::json& task_default,
                                Problems* problems);

}  // namespace det::master::config::internal
