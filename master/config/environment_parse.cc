#include "master/config/environment_parse.h"

#include <string>
#include <vector>

namespace det::master::config::internal {

namespace {

using nlohmann::json;

constexpr std::string_view kPath = "environment";
const std::vector<std::string> kDevices = {"cpu", "cuda", "rocm"};

// "gpu" is the pre-0.17 name of "cuda".
std::string DeviceKey(const std::string& key) { return key == "gpu" ? "cuda" : key; }

void ParseImage(const json& in, const json& fallback, EnvironmentConfig* env, json* out,
                Problems* problems) {
  std::string path = JoinPath(kPath, "image");
  env->image = {
      {"cpu", kDefaultCpuImage}, {"cuda", kDefaultCudaImage}, {"rocm", kDefaultRocmImage}};
  for (const json* source : {&fallback, &in}) {
    const json& v = *source;
    if (v.is_null()) continue;
    if (v.is_string()) {
      for (const std::string& d : kDevices) env->image[d] = v.get<std::string>();
    } else if (v.is_object()) {
      RejectUnknownKeys(v, {"cpu", "cuda", "gpu", "rocm"}, path, problems);
      for (const auto& [key, image] : v.items()) {
        if (image.is_null()) continue;  // null keeps the default image for that device.
        if (!image.is_string()) {
          problems->Add(JoinPath(path, key), "must be a string", image);
          continue;
        }
        env->image[DeviceKey(key)] = image.get<std::string>();
      }
    } else {
      problems->Add(path, "must be a string or a map of cpu, cuda, rocm images", v);
    }
  }
  (*out)["image"] = env->image;
}

void AppendVariables(const json& list, const std::string& path, const std::string& device,
                     EnvironmentConfig* env, Problems* problems) {
  if (!list.is_array()) {
    problems->Add(path, "must be a list of NAME=VALUE strings", list);
    return;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    std::string item_path = path + "[" + std::to_string(i) + "]";
    if (!list[i].is_string()) {
      problems->Add(item_path, "must be a NAME=VALUE string", list[i]);
      continue;
    }
    std::string kv = list[i].get<std::string>();
    if (kv.empty() || kv[0] == '=') {
      problems->Add(item_path, "must be a NAME=VALUE string", list[i]);
      continue;
    }
    if (device.empty()) {
      for (const std::string& d : kDevices) env->environment_variables[d].push_back(kv);
    } else {
      env->environment_variables[device].push_back(kv);
    }
  }
}

void ParseVariables(const json& in, const json& fallback, EnvironmentConfig* env, json* out,
                    Problems* problems) {
  std::string path = JoinPath(kPath, "environment_variables");
  for (const std::string& d : kDevices) env->environment_variables[d] = {};
  for (const json* source : {&fallback, &in}) {
    const json& v = *source;
    if (v.is_null()) continue;
    if (v.is_object()) {
      RejectUnknownKeys(v, {"cpu", "cuda", "gpu", "rocm"}, path, problems);
      for (const auto& [key, list] : v.items()) {
        if (key != "cpu" && key != "cuda" && key != "gpu" && key != "rocm") continue;
        if (list.is_null()) continue;
        AppendVariables(list, JoinPath(path, key), DeviceKey(key), env, problems);
      }
    } else {
      AppendVariables(v, path, "", env, problems);
    }
  }
  (*out)["environment_variables"] = env->environment_variables;
}

void ParseStringList(const json& in, const char* key, std::vector<std::string>* values, json* out,
                     Problems* problems) {
  std::string path = JoinPath(kPath, key);
  (*out)[key] = json::array();
  if (!Has(in, key)) return;
  const json& v = in.at(key);
  if (!v.is_array()) {
    problems->Add(path, "must be a list of strings", v);
    return;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) {
      problems->Add(path + "[" + std::to_string(i) + "]", "must be a string", v[i]);
      continue;
    }
    values->push_back(v[i].get<std::string>());
  }
  (*out)[key] = v;
}

void ParsePorts(const json& in, EnvironmentConfig* env, json* out, Problems* problems) {
  std::string path = JoinPath(kPath, "ports");
  (*out)["ports"] = json::object();
  if (!Has(in, "ports")) return;
  const json& ports = in.at("ports");
  if (!ports.is_object()) {
    problems->Add(path, "must be a map of name to port", ports);
    return;
  }
  for (const auto& [name, port] : ports.items()) {
    if (!port.is_number_integer() || port.get<int64_t>() < 1 || port.get<int64_t>() > 65535) {
      problems->Add(JoinPath(path, name), "must be a port between 1 and 65535", port);
      continue;
    }
    env->ports[name] = port.get<int64_t>();
  }
  (*out)["ports"] = ports;
}

void ParseRegistryAuth(const json& in, EnvironmentConfig* env, json* out, Problems* problems) {
  std::string path = JoinPath(kPath, "registry_auth");
  if (!Has(in, "registry_auth")) {
    (*out)["registry_auth"] = nullptr;
    return;
  }
  const json& auth = in.at("registry_auth");
  if (!auth.is_object()) {
    problems->Add(path, "must be a map", auth);
    return;
  }
  RejectUnknownKeys(auth,
                    {"username", "password", "server", "email", "auth", "serveraddress",
                     "identitytoken", "registrytoken"},
                    path, problems);
  for (const auto& [key, value] : auth.items()) {
    if (!value.is_null() && !value.is_string()) {
      problems->Add(JoinPath(path, key), "must be a string", value);
    }
  }
  env->registry_auth = auth;
}

// Fields of the `determined-container` entry of a pod spec that the platform sets itself.
struct Reserved {
  const char* field;
  const char* why;
};
constexpr Reserved kReservedContainerFields[] = {
    {"image", "set environment.image instead"},
    {"command", "the platform sets the command"},
    {"args", "the platform sets the arguments"},
    {"working_dir", "the platform sets the working directory"},
    {"ports", "set environment.ports instead"},
    {"liveness_probe", "the platform manages probes"},
    {"readiness_probe", "the platform manages probes"},
    {"startup_probe", "the platform manages probes"},
    {"lifecycle", "the platform manages the container lifecycle"},
    {"termination_message_path", "the platform sets it"},
    {"termination_message_policy", "the platform sets it"},
    {"image_pull_policy", "set environment.force_pull_image instead"},
    {"security_context", "set environment.add_capabilities/drop_capabilities instead"},
};

void ParsePodSpec(const json& pod_spec, Problems* problems) {
  std::string path = JoinPath(kPath, "pod_spec");
  if (!pod_spec.is_object()) {
    problems->Add(path, "must be a map", pod_spec);
    return;
  }
  for (const char* key : {"name", "name_space"}) {
    if (pod_spec.contains(key)) {
      problems->Add(JoinPath(path, key), "is not configurable: the platform names its pods");
    }
  }
  if (!Has(pod_spec, "spec")) return;
  const json& spec = pod_spec.at("spec");
  if (!spec.is_object()) {
    problems->Add(JoinPath(path, "spec"), "must be a map", spec);
    return;
  }
  if (!Has(spec, "containers")) return;
  const json& containers = spec.at("containers");
  std::string containers_path = JoinPath(path, "spec.containers");
  if (!containers.is_array()) {
    problems->Add(containers_path, "must be a list", containers);
    return;
  }
  for (size_t i = 0; i < containers.size(); ++i) {
    const json& c = containers[i];
    if (!c.is_object() || c.value("name", json()) != "determined-container") continue;
    std::string item = containers_path + "[" + std::to_string(i) + "]";
    for (const Reserved& r : kReservedContainerFields) {
      if (c.contains(r.field)) {
        problems->Add(JoinPath(item, r.field),
                      std::string("is not configurable in determined-container: ") + r.why);
      }
    }
  }
}

void ParseProxyPorts(const json& ports, Problems* problems) {
  std::string path = JoinPath(kPath, "proxy_ports");
  if (!ports.is_array()) {
    problems->Add(path, "must be a list", ports);
    return;
  }
  for (size_t i = 0; i < ports.size(); ++i) {
    std::string item = path + "[" + std::to_string(i) + "]";
    const json& p = ports[i];
    if (!p.is_object()) {
      problems->Add(item, "must be a map with proxy_port", p);
      continue;
    }
    RejectUnknownKeys(p, {"proxy_port", "proxy_tcp", "unauthenticated", "default_service_id"}, item,
                      problems);
    if (!p.contains("proxy_port")) {
      problems->Add(JoinPath(item, "proxy_port"), "required");
    } else if (!p.at("proxy_port").is_number()) {
      problems->Add(JoinPath(item, "proxy_port"), "must be a number", p.at("proxy_port"));
    }
    for (const char* key : {"proxy_tcp", "unauthenticated", "default_service_id"}) {
      ReadBool(p, key, item, problems);
    }
  }
}

}  // namespace

EnvironmentConfig ParseEnvironment(const nlohmann::json& in, const nlohmann::json& task_defaults,
                                   nlohmann::json* defaulted, Problems* problems) {
  EnvironmentConfig env;
  json& out = *defaulted;
  json section = in.is_null() ? json::object() : in;
  if (!section.is_object()) {
    problems->Add(kPath, "must be a map", in);
    out = in;
    return env;
  }
  out = section;
  RejectUnknownKeys(
      section,
      {"image", "environment_variables", "force_pull_image", "registry_auth", "ports",
       "proxy_ports", "add_capabilities", "drop_capabilities", "pod_spec", "slurm", "pbs"},
      kPath, problems);
  json defaults = task_defaults.is_object() ? task_defaults : json::object();
  auto from_defaults = [&](const char* key) {
    return defaults.contains(key) ? defaults.at(key) : json(nullptr);
  };
  auto from_section = [&](const char* key) {
    return section.contains(key) ? section.at(key) : json(nullptr);
  };

  ParseImage(from_section("image"), from_defaults("image"), &env, &out, problems);
  ParseVariables(from_section("environment_variables"), from_defaults("environment_variables"),
                 &env, &out, problems);

  if (!Has(section, "force_pull_image") &&
      defaults.value("force_pull_image", json()).is_boolean()) {
    section["force_pull_image"] = defaults.at("force_pull_image");
  }
  env.force_pull_image = ReadBool(section, "force_pull_image", kPath, problems).value_or(false);
  out["force_pull_image"] = env.force_pull_image;

  if (!Has(section, "registry_auth") && Has(defaults, "registry_auth")) {
    section["registry_auth"] = defaults.at("registry_auth");
  }
  ParseRegistryAuth(section, &env, &out, problems);
  ParsePorts(section, &env, &out, problems);
  for (const char* key : {"add_capabilities", "drop_capabilities"}) {
    if (!Has(section, key) && Has(defaults, key)) section[key] = defaults.at(key);
  }
  ParseStringList(section, "add_capabilities", &env.add_capabilities, &out, problems);
  ParseStringList(section, "drop_capabilities", &env.drop_capabilities, &out, problems);

  if (Has(section, "proxy_ports"))
    ParseProxyPorts(section.at("proxy_ports"), problems);
  else
    out["proxy_ports"] = json::array();
  if (Has(section, "pod_spec"))
    ParsePodSpec(section.at("pod_spec"), problems);
  else
    out["pod_spec"] = nullptr;
  return env;
}

}  // namespace det::master::config::internal
