#include "cli/checkpoint_render.h"

#include <algorithm>
#include <cstdlib>

#include "cli/format.h"

namespace det::cli {
namespace {

using json = nlohmann::json;

std::string SearcherMetric(const json& checkpoints) {
  if (!checkpoints.is_array() || checkpoints.empty()) return "";
  json config = checkpoints[0].value("training", json::object()).value("experimentConfig", json());
  if (!config.is_object()) return "";
  json searcher = config.value("searcher", json());
  if (!searcher.is_object() || !searcher.contains("metric")) return "";
  const json& m = searcher["metric"];
  return m.is_string() ? m.get<std::string>() : m.dump();
}

std::optional<json> MetricValue(const json& c, const std::string& metric) {
  json avg = c.value("training", json::object()).value("validationMetrics", json());
  if (!avg.is_object()) return std::nullopt;
  avg = avg.value("avgMetrics", json());
  if (!avg.is_object() || metric.empty() || !avg.contains(metric)) return std::nullopt;
  return avg[metric];
}

double ResourceSize(const json& size) {
  if (size.is_number()) return size.get<double>();
  if (size.is_string()) return std::strtod(size.get<std::string>().c_str(), nullptr);
  return 0;
}

}  // namespace

std::string PythonNumberText(const json& value) {
  // nlohmann writes the shortest round-trip form (`0.5`, `1.0`, `1e-05`), as Python's repr.
  if (value.is_number_float()) return value.dump();
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "True" : "False";
  if (value.is_null()) return "None";
  return value.dump();
}

std::vector<std::string> CheckpointListHeaders() {
  return {"Trial ID", "# of Batches", "State", "Validation Metric", "UUID", "Resources", "Size"};
}

std::vector<TableRow> CheckpointListRows(const json& checkpoints, bool csv) {
  std::vector<TableRow> rows;
  if (!checkpoints.is_array()) return rows;
  std::string metric = SearcherMetric(checkpoints);
  bool all_numeric = true;
  for (const json& c : checkpoints) {
    std::optional<json> v = MetricValue(c, metric);
    if (!v || !v->is_number()) all_numeric = false;
  }
  for (const json& c : checkpoints) {
    json training = c.value("training", json::object());
    json metadata = c.value("metadata", json::object());
    std::optional<json> v = MetricValue(c, metric);
    std::string metric_text;
    if (v) metric_text = (all_numeric && !csv) ? JsonCell(*v).value_or("") : PythonNumberText(*v);
    std::string state = JsonString(c, "state");
    json resources = c.value("resources", json());
    std::string names;
    std::string size;
    if (resources.is_object()) {
      std::vector<std::string> keys;
      double total = 0;
      for (auto it = resources.begin(); it != resources.end(); ++it) {
        keys.push_back(it.key());
        total += ResourceSize(it.value());
      }
      std::sort(keys.begin(), keys.end());
      for (const std::string& k : keys) names += (names.empty() ? "" : "\n") + k;
      size = FormatSize(total);
    }
    rows.push_back({JsonCell(training.value("trialId", json())),
                    metadata.is_object() ? JsonCell(metadata.value("steps_completed", json()))
                                         : TableCell(),
                    state.empty() ? "UNSPECIFIED" : StripStatePrefix(state), metric_text,
                    JsonString(c, "uuid"), names, size});
  }
  return rows;
}

std::vector<std::string> CheckpointDescribeHeaders() {
  return {"Experiment ID",   "Trial ID",           "Steps Completed", "Report Time",
          "Checkpoint UUID", "Validation Metrics", "Metadata"};
}

TableRow CheckpointDescribeRow(const json& c) {
  json training = c.value("training", json());
  json metadata = c.value("metadata", json());
  if (!metadata.is_object()) metadata = json::object();
  bool has_training = training.is_object();
  return {has_training ? JsonCell(training.value("experimentId", json())) : TableCell(),
          has_training ? JsonCell(training.value("trialId", json())) : TableCell(),
          JsonCell(metadata.value("steps_completed", json())),
          FormatTime(c.value("reportTime", json())),
          JsonString(c, "uuid"),
          has_training ? TableCell(training.value("validationMetrics", json()).dump(4))
                       : TableCell(),
          metadata.dump(4)};
}

}  // namespace det::cli
