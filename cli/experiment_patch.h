#pragma once
// Bodies of `PATCH /api/v1/experiments/{id}` (a `PatchExperiment`) and of
// `POST /api/v1/experiments/{id}/continue`, as Determined's CLI builds them, and the values
// its messages print.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace det::cli {

// `det experiment label add|remove`: from the `experiment` object of
// `GET /api/v1/experiments/{id}`, the patch {id, name, description, notes, labels} with
// `label` added (appended) or removed; nullopt when the labels would not change (Determined
// then sends nothing).
std::optional<nlohmann::json> LabelPatch(const nlohmann::json& experiment,
                                         const std::string& label, bool add);

// `det experiment set max-slots|weight|priority`: {"id": id, "resources": {key: value}};
// a null value (max-slots `none`) is sent as null.
nlohmann::json ResourcesPatch(int64_t id, const std::string& key, const nlohmann::json& value);

struct GcPolicy {
  int64_t save_experiment_best = 0;
  int64_t save_trial_best = 0;
  int64_t save_trial_latest = 0;
};
// {"id": id, "checkpointStorage": {saveExperimentBest, saveTrialBest, saveTrialLatest}}.
nlohmann::json GcPolicyPatch(int64_t id, const GcPolicy& policy);
// The query of `GET /api/v1/experiments/{id}/preview_gc`.
std::string GcPolicyQuery(const GcPolicy& policy);
// Python's pprint of the policy dict:
// `{'save_experiment_best': 1, 'save_trial_best': 1, 'save_trial_latest': 1}`.
std::string GcPolicyRepr(const GcPolicy& policy);

// Parses `max-slots`' value as Determined's `none_or_int`: `none`/`null` (any case) -> null.
Result<nlohmann::json> ParseNoneOrInt(const std::string& text);
// Python's str() of a float (`2.0`, `0.5`, `1e-05`).
std::string PythonFloat(double value);

// `det experiment continue`: {"id": id, "overrideConfig": <YAML text>} where the YAML is the
// config file text (or `{}`) with the `--config key=value` overrides applied.
Result<nlohmann::json> ContinueBody(int64_t id, const std::optional<std::string>& config_text,
                                    const std::vector<std::string>& overrides);

}  // namespace det::cli
