#include "cli/experiment_patch.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "cli/config_override.h"

namespace det::cli {

using json = nlohmann::json;

std::optional<json> LabelPatch(const json& experiment, const std::string& label, bool add) {
  json labels = experiment.value("labels", json::array());
  if (!labels.is_array()) labels = json::array();
  bool present = std::find(labels.begin(), labels.end(), json(label)) != labels.end();
  if (add == present) return std::nullopt;
  json next = json::array();
  for (const json& l : labels) {
    if (!add && l == json(label)) continue;
    next.push_back(l);
  }
  if (add) next.push_back(label);
  json patch = {{"labels", next}};
  for (const char* key : {"id", "name", "description", "notes"}) {
    if (experiment.contains(key) && !experiment[key].is_null()) patch[key] = experiment[key];
  }
  return patch;
}

json ResourcesPatch(int64_t id, const std::string& key, const json& value) {
  return {{"id", id}, {"resources", {{key, value}}}};
}

json GcPolicyPatch(int64_t id, const GcPolicy& p) {
  return {{"id", id},
          {"checkpointStorage",
           {{"saveExperimentBest", p.save_experiment_best},
            {"saveTrialBest", p.save_trial_best},
            {"saveTrialLatest", p.save_trial_latest}}}};
}

std::string GcPolicyQuery(const GcPolicy& p) {
  return "save_experiment_best=" + std::to_string(p.save_experiment_best) +
         "&save_trial_best=" + std::to_string(p.save_trial_best) +
         "&save_trial_latest=" + std::to_string(p.save_trial_latest);
}

std::string GcPolicyRepr(const GcPolicy& p) {
  return "{'save_experiment_best': " + std::to_string(p.save_experiment_best) +
         ", 'save_trial_best': " + std::to_string(p.save_trial_best) +
         ", 'save_trial_latest': " + std::to_string(p.save_trial_latest) + "}";
}

Result<json> ParseNoneOrInt(const std::string& text) {
  std::string lower;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) {
      lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  if (lower == "none" || lower == "null") return json(nullptr);
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0) {
    return InvalidArgument("invalid none_or_int value: '" + text + "'");
  }
  return json(n);
}

std::string PythonFloat(double value) { return json(value).dump(); }

Result<json> ContinueBody(int64_t id, const std::optional<std::string>& config_text,
                          const std::vector<std::string>& overrides) {
  std::string base = config_text.value_or("{}");
  DET_ASSIGN_OR_RETURN(std::string text, ApplyConfigOverrides(base, overrides));
  if (!config_text && overrides.empty()) text = "{}\n";
  return json{{"id", id}, {"overrideConfig", text}};
}

}  // namespace det::cli
