#include "cli/trial_checkpoint_pick.h"

namespace det::cli {

using nlohmann::json;

namespace {

bool Downloadable(const json& c) {
  std::string state = c.value("state", "");
  return state == "STATE_COMPLETED" || state == "STATE_PARTIALLY_DELETED";
}

int64_t StepsCompleted(const json& c) {
  const json metadata = c.value("metadata", json::object());
  const json steps = metadata.is_object() ? metadata.value("steps_completed", json()) : json();
  return steps.is_number_integer() ? steps.get<int64_t>() : -1;
}

// The metric of `c` to rank by; nullopt when it has none.
std::optional<double> MetricOf(const json& c, const std::string& sort_by) {
  const json training = c.value("training", json::object());
  if (!training.is_object()) return std::nullopt;
  json v;
  if (sort_by.empty()) {
    v = training.value("searcherMetric", json());
  } else {
    const json vm = training.value("validationMetrics", json::object());
    const json avg = vm.is_object() ? vm.value("avgMetrics", json::object()) : json::object();
    v = avg.is_object() ? avg.value(sort_by, json()) : json();
  }
  if (!v.is_number()) return std::nullopt;
  return v.get<double>();
}

bool ExperimentSmallerIsBetter(const json& c) {
  const json training = c.value("training", json::object());
  const json config = training.is_object() ? training.value("experimentConfig", json()) : json();
  const json searcher = config.is_object() ? config.value("searcher", json()) : json();
  const json smaller = searcher.is_object() ? searcher.value("smaller_is_better", json()) : json();
  return smaller.is_boolean() ? smaller.get<bool>() : true;
}

}  // namespace

Result<json> PickTrialCheckpoint(const json& checkpoints, const TrialCheckpointPick& pick) {
  if (!pick.sort_by.empty() && !pick.smaller_is_better) {
    return InvalidArgument("--smaller-is-better must be given with --sort-by");
  }
  const json* chosen = nullptr;
  std::optional<double> chosen_metric;
  if (!checkpoints.is_array()) return NotFound("no checkpoints");
  for (const json& c : checkpoints) {
    if (!c.is_object() || !Downloadable(c)) continue;
    if (pick.latest) {
      if (chosen == nullptr || StepsCompleted(c) > StepsCompleted(*chosen)) chosen = &c;
      continue;
    }
    std::optional<double> metric = MetricOf(c, pick.sort_by);
    if (!metric) continue;
    bool smaller = pick.smaller_is_better.value_or(ExperimentSmallerIsBetter(c));
    if (chosen == nullptr || (smaller ? *metric < *chosen_metric : *metric > *chosen_metric)) {
      chosen = &c;
      chosen_metric = metric;
    }
  }
  if (chosen == nullptr) {
    return NotFound(pick.latest ? "the trial has no downloadable checkpoint"
                                : "the trial has no downloadable checkpoint with a " +
                                      (pick.sort_by.empty() ? std::string("searcher metric")
                                                            : "'" + pick.sort_by + "' metric"));
  }
  return *chosen;
}

}  // namespace det::cli
