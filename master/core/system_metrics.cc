#include "master/core/system_metrics.h"

#include <array>

namespace det::master::core {

using nlohmann::json;

bool IsSystemMetricGroup(const std::string& group) {
  static const std::array<const char*, 5> kGroups = {"cpu", "gpu", "memory", "disk", "network"};
  for (const char* g : kGroups) {
    if (group == g) return true;
  }
  return false;
}

std::string SystemMetricGroupOfSeries(const std::string& name) {
  static const std::array<std::pair<const char*, const char*>, 5> kPrefixes = {
      {{"cpu_", "cpu"},
       {"gpu_", "gpu"},
       {"memory_", "memory"},
       {"disk_", "disk"},
       {"net_", "network"}}};
  for (const auto& [prefix, group] : kPrefixes) {
    if (name.rfind(prefix, 0) == 0) return group;
  }
  return "";
}

Result<std::vector<std::pair<std::string, json>>> SplitSystemMetricsReport(const std::string& group,
                                                                           const json& metrics) {
  if (!IsSystemMetricGroup(group)) {
    return InvalidArgument("group: '" + group +
                           "' is not a system metrics group (cpu, gpu, memory, disk, network)");
  }
  if (!metrics.is_object()) {
    return InvalidArgument("metrics.metrics.avgMetrics: must be an object of agent ids (got " +
                           metrics.dump() + ")");
  }
  std::vector<std::pair<std::string, json>> out;
  for (const auto& [agent, values] : metrics.items()) {
    const std::string where = "metrics.metrics.avgMetrics." + agent;
    if (agent.empty()) return InvalidArgument("metrics.metrics.avgMetrics: empty agent id");
    if (!values.is_object()) {
      return InvalidArgument(where + ": must be an object of metrics (got " + values.dump() + ")");
    }
    for (const auto& [name, v] : values.items()) {
      if (v.is_number()) continue;
      if (!v.is_object()) {
        return InvalidArgument(where + "." + name +
                               ": must be a number or an object of numbers (got " + v.dump() + ")");
      }
      for (const auto& [inner, x] : v.items()) {
        if (!x.is_number()) {
          return InvalidArgument(where + "." + name + "." + inner + ": must be a number (got " +
                                 x.dump() + ")");
        }
      }
    }
    out.emplace_back(agent, values);
  }
  return out;
}

std::vector<SystemSeries> SeriesOfReport(const std::string& group, const std::string& agent_id,
                                         const json& metrics) {
  std::vector<SystemSeries> out;
  if (!metrics.is_object()) return out;
  for (const auto& [key, v] : metrics.items()) {
    if (v.is_number()) {
      out.push_back({key, agent_id, ""});
    } else if (v.is_object() && group == "gpu") {
      for (const auto& [name, x] : v.items()) {
        if (x.is_number()) out.push_back({name, agent_id, key});
      }
    }
    // Other labelled metrics (disk paths) are not series of this API, as in Determined.
  }
  return out;
}

std::vector<std::pair<std::string, double>> ValuesOfSeries(const json& metrics,
                                                           const std::string& name,
                                                           const std::string& gpu_uuid) {
  std::vector<std::pair<std::string, double>> out;
  if (!metrics.is_object()) return out;
  if (gpu_uuid.empty()) {
    auto it = metrics.find(name);
    if (it != metrics.end() && it->is_number()) {
      out.emplace_back("", it->get<double>());
      return out;
    }
    for (const auto& [label, v] : metrics.items()) {
      if (!v.is_object()) continue;
      auto x = v.find(name);
      if (x != v.end() && x->is_number()) out.emplace_back(label, x->get<double>());
    }
    return out;
  }
  auto labelled = metrics.find(gpu_uuid);
  if (labelled == metrics.end() || !labelled->is_object()) return out;
  auto x = labelled->find(name);
  if (x != labelled->end() && x->is_number()) out.emplace_back(gpu_uuid, x->get<double>());
  return out;
}

}  // namespace det::master::core
