#include "cli/model_render.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>

#include "cli/format.h"

namespace det::cli {

using json = nlohmann::json;

std::string Upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  return text;
}

std::optional<std::string> PythonDatetime(const json& value, char sep) {
  if (!value.is_string() || value.get<std::string>().empty()) return std::nullopt;
  const std::string& text = value.get_ref<const std::string&>();
  std::optional<int64_t> seconds = ParseRfc3339(text);
  if (!seconds) return text;
  time_t t = static_cast<time_t>(*seconds);
  struct tm tm_utc;
  gmtime_r(&t, &tm_utc);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02d%c%02d:%02d:%02d", tm_utc.tm_year + 1900,
                tm_utc.tm_mon + 1, tm_utc.tm_mday, sep, tm_utc.tm_hour, tm_utc.tm_min,
                tm_utc.tm_sec);
  // Determined's SDK drops the sub-second part before parsing the time.
  return std::string(buf) + "+00:00";
}

std::string PythonJsonDumps(const json& value, int indent) {
  return value.dump(indent, ' ', /*ensure_ascii=*/true);
}

std::vector<std::string> ModelDescribeHeaders() {
  return {"ID",      "Name", "Description", "Workspace ID", "Creation Time", "Last Updated Time",
          "Metadata"};
}

namespace {
json MetadataOf(const json& obj) {
  json md = obj.value("metadata", json());
  return md.is_object() ? md : json::object();
}
}  // namespace

TableRow ModelDescribeRow(const json& m) {
  return {JsonCell(m.value("id", json())),
          JsonString(m, "name"),
          JsonString(m, "description"),
          JsonCell(m.value("workspaceId", json())),
          PythonDatetime(m.value("creationTime", json())),
          PythonDatetime(m.value("lastUpdatedTime", json())),
          PythonJsonDumps(MetadataOf(m), 4)};
}

std::vector<std::string> ModelListHeaders() {
  return {"ID", "Name", "Workspace ID", "Creation Time", "Last Updated Time", "Metadata"};
}

TableRow ModelListRow(const json& m) {
  return {JsonCell(m.value("id", json())),
          JsonString(m, "name"),
          JsonCell(m.value("workspaceId", json())),
          PythonDatetime(m.value("creationTime", json())),
          PythonDatetime(m.value("lastUpdatedTime", json())),
          PythonJsonDumps(MetadataOf(m), 2)};
}

std::vector<std::string> ModelVersionHeaders() {
  return {"Version #", "Trial ID", "Batch #", "Checkpoint UUID", "Validation Metrics", "Metadata"};
}

TableRow ModelVersionRow(const json& v) {
  json c = v.value("checkpoint", json::object());
  if (!c.is_object()) c = json::object();
  json training = c.value("training", json());
  json metadata = c.value("metadata", json());
  TableCell trial_id, batch, metrics = std::string();
  if (training.is_object()) {
    trial_id = JsonCell(training.value("trialId", json()));
    // The SDK's validation_metrics: the v1Metrics object with both of its fields, or {}.
    json vm = training.value("validationMetrics", json());
    json shown = json::object();
    if (vm.is_object()) {
      shown["avgMetrics"] = vm.value("avgMetrics", json::object());
      shown["batchMetrics"] = vm.value("batchMetrics", json());
    }
    metrics = PythonJsonDumps(shown, 2);
  }
  if (metadata.is_object() && !metadata.empty()) {
    batch = JsonCell(metadata.value("steps_completed", json()));
  }
  return {JsonCell(v.value("version", json())), trial_id, batch, JsonString(c, "uuid"), metrics,
          PythonJsonDumps(metadata, 2)};
}

json ModelSummaryJson(const json& m) {
  auto iso = [&](const char* key) -> json {
    std::optional<std::string> t = PythonDatetime(m.value(key, json()), 'T');
    return t ? json(*t) : json(nullptr);
  };
  return json{{"name", m.value("name", json())},
              {"id", m.value("id", json())},
              {"description", m.value("description", json(""))},
              {"creation_time", iso("creationTime")},
              {"last_updated_time", iso("lastUpdatedTime")},
              {"metadata", MetadataOf(m)},
              {"archived", m.value("archived", false)}};
}

}  // namespace det::cli
