#include "master/config/resources_parse.h"

#include <string>
#include <string_view>

namespace det::master::config::internal {

namespace {
using nlohmann::json;
constexpr std::string_view kResources = "resources";
constexpr int64_t kMinPriority = 1;
constexpr int64_t kMaxPriority = 99;
}  // namespace

ResourcesConfig ParseResources(const nlohmann::json& in, nlohmann::json* defaulted,
                               Problems* problems) {
  ResourcesConfig cfg;
  json& out = *defaulted;
  out = in.is_null() ? json::object() : in;
  if (!out.is_object()) {
    problems->Add(kResources, "must be a map", in);
    return cfg;
  }
  if (out.contains("slots")) {
    problems->Add(JoinPath(kResources, "slots"), "not supported; use resources.slots_per_trial");
  }
  RejectUnknownKeys(out,
                    {"slots", "slots_per_trial", "max_slots", "weight", "priority",
                     "resource_pool", "shm_size", "devices", "native_parallel", "is_single_node",
                     "agent_label"},
                    kResources, problems);

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
