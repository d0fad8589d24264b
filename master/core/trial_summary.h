#pragma once
// Trial summary metrics, as Determined 0.38 keeps them per trial (the `summaryMetrics` of a trial
// in /api/v1): for each metric group ("avg_metrics" for training, "validation_metrics" for
// validation, the group's own name for generic groups) and each metric name, the metric's type
// and, for numbers, count / sum / min / max / mean; `last` is the value of the latest report
// (null for a name the latest report of that group did not carry). Pure: no I/O.
//
// Types: "number" (JSON numbers and the strings "NaN", "Infinity", "-Infinity", which is how
// non-finite values travel), "date" (a Python isoformat() string), "string", "boolean",
// "object", "array", "null". A name reported with two different types becomes "string" and
// loses its numeric statistics, as in Determined. Non-finite results are written as those
// strings, as Determined writes them.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace det::master::core {

// The key of a metric group in the summary.
std::string SummaryKeyOfGroup(const std::string& group);

// The averages a stored report holds: its "validation_metrics" when present (older validation
// reports), else its "avg_metrics", else an empty object.
nlohmann::json AveragesOfReport(const nlohmann::json& stored_metrics);

// Folds one report's `avg_metrics` (an object; anything else counts as empty) into the summary
// of its group, `group_summary` (an object; reset to one if it is not).
void AccumulateSummary(nlohmann::json& group_summary, const nlohmann::json& avg_metrics);

// The summary of a group from all of its (unarchived) reports in report order.
nlohmann::json SummaryOfReports(const std::vector<nlohmann::json>& avg_metrics_in_order);

}  // namespace det::master::core
