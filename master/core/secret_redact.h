#pragma once
// One masking rule for every config the API shows: GET /api/v1/master/config and every
// experiment's or task's config. The stored configs keep the real values (a trial's
// DET_EXPERIMENT_CONFIG, the GC task and checkpoint downloads need them); only what is shown
// is masked.

#include <nlohmann/json.hpp>
#include <string>

namespace det::master::core {

inline constexpr char kRedacted[] = "********";

// Field names whose values are secrets: *password*, *secret*, *token*, access_key,
// signing_key, and azure's connection_string and credential.
bool IsSecretKey(const std::string& key);

// Replaces the value of every secret-named field, at any depth, by kRedacted.
void RedactSecrets(nlohmann::json& j);

// `config` (an experiment's or task's) as the API shows it: checkpoint_storage and
// environment.registry_auth with their secret fields masked, and every environment variable
// that came from the master's task_container_defaults (`master_task_defaults`) shown as
// NAME=********. A user's own variables stay as they wrote them.
nlohmann::json ShownConfig(const nlohmann::json& config,
                           const nlohmann::json& master_task_defaults);

}  // namespace det::master::core
