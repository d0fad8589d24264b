#include "master/config/searcher_metric.h"

#include "master/config/experiment_config.h"

namespace det::master::config {

SearcherMetric SearcherMetric::FromConfigJson(const nlohmann::json& config) {
  SearcherMetric m;
  if (!config.is_object() || !config.contains("searcher")) return m;
  const nlohmann::json& s = config["searcher"];
  if (!s.is_object()) return m;
  if (s.contains("metric") && s["metric"].is_string()) m.name = s["metric"].get<std::string>();
  if (s.contains("smaller_is_better") && s["smaller_is_better"].is_boolean()) {
    m.smaller_is_better = s["smaller_is_better"].get<bool>();
  }
  return m;
}

SearcherMetric SearcherMetric::FromConfig(const ExperimentConfig& config) {
  return SearcherMetric{config.searcher.metric, config.searcher.smaller_is_better};
}

std::optional<double> SearcherMetric::ValueIn(const nlohmann::json& values) const {
  if (name.empty() || !values.is_object()) return std::nullopt;
  auto it = values.find(name);
  if (it == values.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::optional<double> SearcherMetric::ValueInReport(const nlohmann::json& report) const {
  if (!report.is_object()) return std::nullopt;
  if (report.contains("validation_metrics")) return ValueIn(report["validation_metrics"]);
  if (report.contains("avg_metrics")) return ValueIn(report["avg_metrics"]);
  return std::nullopt;
}

}  // namespace det::master::config
