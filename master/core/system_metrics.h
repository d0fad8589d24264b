#pragma once
// System metrics of the profiler: which report groups exist, what a report must look like, and
// how a stored report splits into series (Determined's TrialProfilerMetricLabels). Pure: no I/O.
//
// A report of group G is {agent_id: {name: number, label: {name: number}}}: plain values are
// one series per agent ("cpu_util_simple"), labelled ones one per label (a GPU uuid for
// "gpu_util"; disk paths for "disk_util", which Determined does not list as series either).

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace det::master::core {

// cpu, gpu, memory, disk, network: the groups whose reports are system metrics.
bool IsSystemMetricGroup(const std::string& group);

// The group a series name belongs to by its prefix (cpu_, gpu_, memory_, disk_, net_), or "".
std::string SystemMetricGroupOfSeries(const std::string& name);

// Checks a report and splits it by agent: [(agent_id, {name: value, ...})]. Errors name the
// offending key and value.
Result<std::vector<std::pair<std::string, nlohmann::json>>> SplitSystemMetricsReport(
    const std::string& group, const nlohmann::json& metrics);

struct SystemSeries {
  std::string name;
  std::string agent_id;
  std::string gpu_uuid;  // "" unless a GPU metric
};

// The series one agent's report holds, in name order.
std::vector<SystemSeries> SeriesOfReport(const std::string& group, const std::string& agent_id,
                                         const nlohmann::json& metrics);

// The values of series `name` in one agent's report: one per GPU when `gpu_uuid` is "" and the
// metric is labelled, else at most one. Pairs of (gpu uuid or "", value).
std::vector<std::pair<std::string, double>> ValuesOfSeries(const nlohmann::json& metrics,
                                                           const std::string& name,
                                                           const std::string& gpu_uuid);

}  // namespace det::master::core
