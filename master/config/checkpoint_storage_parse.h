#pragma once
// checkpoint_storage: the experiment's object merged over the master's default, validated and
// given its GC defaults (save_experiment_best 0, save_trial_best 1, save_trial_latest 1).

#include <nlohmann/json.hpp>

#include "master/config/problems.h"

namespace det::master::config::internal {

// Merges `experiment` over `master_default` key by key when their types agree (or the
// experiment names none); otherwise only the experiment's object is used. Null when neither is
// set: the caller decides whether storage is required.
nlohmann::json MergeCheckpointStorage(const nlohmann::json& experiment,
                                      const nlohmann::json& master_default);

// Validates a merged storage object and fills the save_* defaults. Returns the defaulted object.
nlohmann::json DefaultCheckpointStorage(const nlohmann::json& storage, Problems* problems);

}  // namespace det::master::config::internal
