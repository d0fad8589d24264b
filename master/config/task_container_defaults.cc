#include "master/config/task_container_defaults.h"

#include <algorithm>
#include <set>
#include <string>

namespace det::master::config {

using nlohmann::json;

namespace {

std::string VarName(const json& v) {
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  return s.substr(0, s.find('='));
}

// `over`'s NAME=VALUE entries replace `base`'s of the same NAME; the rest of `base` first.
json MergeVarList(const json& base, const json& over) {
  if (!base.is_array()) return over;
  if (!over.is_array()) return base;
  std::set<std::string> names;
  for (const json& v : over) names.insert(VarName(v));
  json out = json::array();
  for (const json& v : base) {
    if (!names.count(VarName(v))) out.push_back(v);
  }
  for (const json& v : over) out.push_back(v);
  return out;
}

// A list applies to every device; a map gives each device its own.
json PerDevice(const json& vars) {
  if (vars.is_object()) return vars;
  return json{{"cpu", vars}, {"cuda", vars}, {"rocm", vars}};
}

json MergeEnvironmentVariables(const json& base, const json& over) {
  if (base.is_null()) return over;
  if (over.is_null()) return base;
  if (base.is_array() && over.is_array()) return MergeVarList(base, over);
  json b = PerDevice(base), o = PerDevice(over), out = json::object();
  for (const char* device : {"cpu", "cuda", "rocm"}) {
    out[device] = MergeVarList(b.value(device, json::array()), o.value(device, json::array()));
  }
  return out;
}

// `over`'s entries, then `base`'s for container paths `over` does not mount.
json MergeByContainerPath(const json& base, const json& over) {
  if (!base.is_array()) return over;
  if (!over.is_array()) return base;
  std::set<std::string> taken;
  for (const json& m : over) {
    if (m.is_object()) taken.insert(m.value("container_path", std::string()));
  }
  json out = over;
  for (const json& m : base) {
    if (!m.is_object() || !taken.count(m.value("container_path", std::string()))) out.push_back(m);
  }
  return out;
}

json Union(const json& base, const json& over) {
  std::set<std::string> all;
  for (const json* list : {&base, &over}) {
    if (!list->is_array()) continue;
    for (const json& c : *list) all.insert(c.is_string() ? c.get<std::string>() : c.dump());
  }
  return json(std::vector<std::string>(all.begin(), all.end()));
}

}  // namespace

json MergeTaskContainerDefaults(const json& master, const json& pool) {
  if (!pool.is_object() || pool.empty()) return master;
  if (!master.is_object()) return pool;
  json out = master;
  for (const auto& [key, value] : pool.items()) {
    if (value.is_null()) continue;
    if (key == "environment_variables") {
      out[key] = MergeEnvironmentVariables(master.value(key, json()), value);
    } else if (key == "bind_mounts" || key == "devices") {
      out[key] = MergeByContainerPath(master.value(key, json()), value);
    } else if (key == "add_capabilities" || key == "drop_capabilities") {
      out[key] = Union(master.value(key, json()), value);
    } else if (key == "startup_hook" && value.is_string() && value.get<std::string>().empty()) {
      continue;  // an empty hook keeps the master's
    } else {
      out[key] = value;
    }
  }
  return out;
}

}  // namespace det::master::config
