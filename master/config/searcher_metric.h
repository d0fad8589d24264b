#pragma once
// The searcher's metric of an experiment (searcher.metric and searcher.smaller_is_better), read
// in one place from a stored config and applied to reported validation metrics. Pure.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace det::master::config {

struct ExperimentConfig;

struct SearcherMetric {
  std::string name;
  bool smaller_is_better = true;

  // From an experiment config as stored (its "searcher" section); a missing or mistyped field
  // keeps its default (no metric name, smaller is better).
  static SearcherMetric FromConfigJson(const nlohmann::json& config);
  static SearcherMetric FromConfig(const ExperimentConfig& config);

  // The metric's value in a flat map of metric values, when present and numeric.
  std::optional<double> ValueIn(const nlohmann::json& values) const;
  // The metric's value in a stored validation report: its "validation_metrics", else its
  // "avg_metrics".
  std::optional<double> ValueInReport(const nlohmann::json& report) const;
  // Whether `a` is strictly better than `b`.
  bool Better(double a, double b) const { return smaller_is_better ? a < b : a > b; }
};

}  // namespace det::master::config
