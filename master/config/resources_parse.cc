#include "master/config/resources_parse.h"

#include <regex>
#include <string>
#include <string_view>

namespace det::master::config::internal {

namespace {
using nlohmann::json;
constexpr std::string_view kResources = "resources";
constexpr int64_t kMinPriority = 1;
constexpr int64_t kMaxPriority = 99;

// Determined's memory size syntax: "4G", "4 GiB", "512m", "1.5gb", "100b", "1024".
bool IsMemorySize(const std::string& text) {
  static const std::regex kSize(R"(^([0-9]*[.])?[0-9]+ ?(([kmgtpKMGTP]([iI]?[bB])?)|[bB])?$)");
  return std::regex_match(text, kSize);
}

// docker's --device form "/host:/container[:mode]" with mode letters from r, w, m.
bool IsDeviceString(const std::string& text) {
  static const std::regex kDevice(R"(^/[^:]*:/[^:]*(:[rwm]*)?$)");
  return std::regex_match(text, kDevice);
}
}  // namespace

nlohmann::json ParseDevices(const nlohmann::json& in, std::string_view path, Problems* problems) {
  if (in.is_null()) return json::array();
  if (!in.is_array()) {
    problems->Add(path, "must be a list", in);
    return in;
  }
  json out = json::array();
  for (size_t i = 0; i < in.size(); ++i) {
    std::string item = std::string(path) + "[" + std::to_string(i) + "]";
    json d = in[i];
    if (d.is_string()) {
      // "host_path:container_path[:mode]", as docker --device takes it.
      std::string s = d.get<std::string>();
      size_t c1 = s.find(':');
      size_t c2 = c1 == std::string::npos ? c1 : s.find(':', c1 + 1);
      if (!IsDeviceString(s)) {
        problems->Add(
            item, "must be /host_path:/container_path[:mode] (mode letters r, w, m) or a map", d);
        out.push_back(d);
        continue;
      }
      d = json{{"host_path", s.substr(0, c1)},
               {"container_path", s.substr(c1 + 1, c2 == std::string::npos ? c2 : c2 - c1 - 1)},
               {"mode", c2 == std::string::npos ? std::string("mrw") : s.substr(c2 + 1)}};
    }
    if (!d.is_object()) {
      problems->Add(item, "must be a map", d);
      out.push_back(d);
      continue;
    }
    RejectUnknownKeys(d, {"host_path", "container_path", "mode"}, item, problems);
    for (const char* key : {"host_path", "container_path"}) {
      if (!Has(d, key))
        problems->Add(JoinPath(item, key), "required");
      else
        ReadString(d, key, item, problems);
    }
    if (!Has(d, "mode"))
      d["mode"] = "mrw";
    else
      ReadString(d, "mode", item, problems);
    out.push_back(std::move(d));
  }
  return out;
}

ResourcesConfig ParseResources(const nlohmann::json& in, nlohmann::json* defaulted,
                               Problems* problems) {
  ResourcesConfig cfg;
  json& out = *defaulted;
  out = in.is_null() ? json::object() : in;
  if (!out.is_object()) {
    problems->Add(kResources, "must be a map", in);
    return cfg;
  }
  RejectUnknownKeys(out,
                    {"slots", "slots_per_trial", "max_slots", "weight", "priority", "resource_pool",
                     "shm_size", "devices", "native_parallel", "is_single_node", "agent_label"},
                    kResources, problems);

  // `slots` is accepted and ignored, as Determined does; slots_per_trial is what counts.
  ReadInt(out, "slots", kResources, problems);

  if (auto v = ReadInt(out, "slots_per_trial", kResources, problems)) {
    if (*v < 0) problems->Add(JoinPath(kResources, "slots_per_trial"), "must be >= 0", *v);
    cfg.slots_per_trial = *v;
  }
  out["slots_per_trial"] = cfg.slots_per_trial;

  if (auto v = ReadInt(out, "max_slots", kResources, problems)) {
    if (*v < 0) problems->Add(JoinPath(kResources, "max_slots"), "must be >= 0", *v);
    cfg.max_slots = *v;
  }

  if (auto v = ReadNumber(out, "weight", kResources, problems)) {
    if (!(*v >= 0)) problems->Add(JoinPath(kResources, "weight"), "must be >= 0", *v);
    cfg.weight = *v;
  }
  if (!Has(out, "weight")) out["weight"] = 1;

  if (auto v = ReadInt(out, "priority", kResources, problems)) {
    if (*v < kMinPriority || *v > kMaxPriority) {
      problems->Add(JoinPath(kResources, "priority"), "must be between 1 and 99", *v);
    }
    cfg.priority = *v;
  }

  if (auto v = ReadString(out, "resource_pool", kResources, problems)) cfg.resource_pool = *v;
  out["resource_pool"] = cfg.resource_pool;

  if (cfg.max_slots && cfg.slots_per_trial > *cfg.max_slots) {
    problems->Add(JoinPath(kResources, "slots_per_trial"),
                  "slots_per_trial (" + std::to_string(cfg.slots_per_trial) +
                      ") exceeds max_slots (" + std::to_string(*cfg.max_slots) + ")");
  }
  if (!Has(out, "max_slots")) out["max_slots"] = nullptr;
  if (!Has(out, "priority")) out["priority"] = nullptr;

  if (Has(out, "shm_size")) {
    const json& shm = out.at("shm_size");
    bool ok = shm.is_string() ? IsMemorySize(shm.get<std::string>())
                              : shm.is_number_integer() && shm.get<int64_t>() >= 0;
    if (!ok) {
      problems->Add(JoinPath(kResources, "shm_size"),
                    "must be a size in bytes (>= 0) or a memory size string: a number, an "
                    "optional space and a unit k, m, g, t or p (optionally followed by b or ib), "
                    "or b, such as \"4G\" or \"512 MiB\"",
                    shm);
    }
    cfg.shm_size = shm;
  } else {
    out["shm_size"] = nullptr;
  }
  cfg.native_parallel = ReadBool(out, "native_parallel", kResources, problems).value_or(false);
  out["native_parallel"] = cfg.native_parallel;
  cfg.is_single_node = ReadBool(out, "is_single_node", kResources, problems);
  if (!Has(out, "is_single_node")) out["is_single_node"] = nullptr;
  if (Has(out, "agent_label")) ReadString(out, "agent_label", kResources, problems);
  out["devices"] = ParseDevices(out.contains("devices") ? out.at("devices") : json(),
                                JoinPath(kResources, "devices"), problems);
  cfg.devices = out["devices"];
  return cfg;
}

nlohmann::json ParseBindMounts(const nlohmann::json& in, Problems* problems) {
  constexpr std::string_view kPath = "bind_mounts";
  if (in.is_null()) return json::array();
  if (!in.is_array()) {
    problems->Add(kPath, "must be a list", in);
    return in;
  }
  json out = json::array();
  for (size_t i = 0; i < in.size(); ++i) {
    std::string path = std::string(kPath) + "[" + std::to_string(i) + "]";
    const json& mount = in[i];
    if (!mount.is_object()) {
      problems->Add(path, "must be a map", mount);
      out.push_back(mount);
      continue;
    }
    json m = mount;
    RejectUnknownKeys(mount, {"host_path", "container_path", "read_only", "propagation"}, path,
                      problems);
    if (!Has(mount, "host_path")) {
      problems->Add(JoinPath(path, "host_path"), "required");
    } else if (auto host = ReadString(mount, "host_path", path, problems)) {
      if (host->empty() || (*host)[0] != '/') {
        problems->Add(JoinPath(path, "host_path"), "must be an absolute path", *host);
      }
    }
    if (!Has(mount, "container_path")) {
      problems->Add(JoinPath(path, "container_path"), "required");
    } else if (auto container = ReadString(mount, "container_path", path, problems)) {
      if (*container == ".") {
        problems->Add(JoinPath(path, "container_path"), "must not be the working directory",
                      *container);
      }
    }
    m["read_only"] = ReadBool(mount, "read_only", path, problems).value_or(false);
    m["propagation"] =
        ReadString(mount, "propagation", path, problems).value_or(std::string("rprivate"));
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace det::master::config::internal
