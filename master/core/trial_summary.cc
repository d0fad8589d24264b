#include "master/core/trial_summary.h"

#include <cmath>
#include <limits>
#include <optional>
#include <regex>

namespace det::master::core {
namespace {

using nlohmann::json;

std::optional<double> SpecialFloat(const std::string& s) {
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (s == "Infinity") return std::numeric_limits<double>::infinity();
  if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  return std::nullopt;
}

bool IsIsoDate(const std::string& s) {
  // Python's datetime.isoformat(), as Determined recognises it.
  static const std::regex kIso(
      R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$)");
  return std::regex_match(s, kIso);
}

// The summary type of a value and, for numbers, its value.
std::string TypeOf(const json& v, double* number) {
  switch (v.type()) {
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      *number = v.get<double>();
      return "number";
    case json::value_t::string: {
      const std::string& s = v.get_ref<const std::string&>();
      if (std::optional<double> f = SpecialFloat(s)) {
        *number = *f;
        return "number";
      }
      return IsIsoDate(s) ? "date" : "string";
    }
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::null:
      return "null";
    default:
      return "string";
  }
}

json Encode(double f) {
  if (std::isnan(f)) return "NaN";
  if (std::isinf(f)) return f > 0 ? "Infinity" : "-Infinity";
  return f;
}

double Decode(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    if (std::optional<double> f = SpecialFloat(v.get<std::string>())) return *f;
  }
  return 0;
}

// Go's math.Min / math.Max: NaN wins, so a NaN once reported stays the min and max.
double NanMin(double a, double b) {
  return (std::isnan(a) || std::isnan(b)) ? NAN : std::min(a, b);
}
double NanMax(double a, double b) {
  return (std::isnan(a) || std::isnan(b)) ? NAN : std::max(a, b);
}

}  // namespace

std::string SummaryKeyOfGroup(const std::string& group) {
  if (group == "training") return "avg_metrics";
  if (group == "validation") return "validation_metrics";
  return group;
}

json AveragesOfReport(const json& stored_metrics) {
  if (!stored_metrics.is_object()) return json::object();
  auto it = stored_metrics.find("validation_metrics");
  if (it == stored_metrics.end()) it = stored_metrics.find("avg_metrics");
  return it != stored_metrics.end() && it->is_object() ? *it : json::object();
}

void AccumulateSummary(json& group_summary, const json& avg_metrics) {
  if (!group_summary.is_object()) group_summary = json::object();
  const json empty = json::object();
  const json& metrics = avg_metrics.is_object() ? avg_metrics : empty;
  for (const auto& [name, value] : metrics.items()) {
    double number = 0;
    std::string type = TypeOf(value, &number);
    json& s = group_summary[name];
    if (!s.is_object() || !s.contains("type")) {
      s = json{{"type", type}};
    } else if (s["type"] != type) {
      type = "string";
      s = json{{"type", type}};
    }
    if (type != "number") continue;
    if (!s.contains("count")) {
      s["count"] = 1;
      s["sum"] = Encode(number);
      s["min"] = Encode(number);
      s["max"] = Encode(number);
      s["mean"] = Encode(number);
    } else {
      int64_t count = static_cast<int64_t>(Decode(s["count"])) + 1;
      double sum = Decode(s["sum"]) + number;
      s["count"] = count;
      s["sum"] = Encode(sum);
      s["min"] = Encode(NanMin(Decode(s["min"]), number));
      s["max"] = Encode(NanMax(Decode(s["max"]), number));
      s["mean"] = Encode(sum / static_cast<double>(count));
    }
  }
  // `last` is the latest report's value for every name of the group, null where it had none.
  for (auto& [name, s] : group_summary.items()) {
    auto it = metrics.find(name);
    s["last"] = it == metrics.end() ? json(nullptr) : *it;
  }
}

json SummaryOfReports(const std::vector<json>& avg_metrics_in_order) {
  json summary = json::object();
  for (const json& m : avg_metrics_in_order) AccumulateSummary(summary, m);
  return summary;
}

}  // namespace det::master::core
