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
  env->image = {{"cpu", kDefaultCpuImage}, {"cuda", kDefaultCudaImage},
                {"rocm", kDefaultRocmImage}};
  for (const json* source : {&fallback, &in}) {
    const json& v = *source;
    if (v.is_null()) continue;
    if (v.is_string()) {
      for (const std::string& d : kDevices) env->image[d] = v.get<std::string>();
    } else if (v.is_object()) {
      RejectUnknownKeys(v, {"cpu", "cuda", "gpu", "rocm"}, path, problems);
      for (const auto& [key, image] : v.items()) {
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

void ParseStringList(const json& in, const char* key, std::vector<std::string>* values,
                     json* out, Problems* problems) {
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
  RejectUnknownKeys(section,
                    {"image", "environment_variables", "force_pull_image", "registry_auth",
                     "ports", "proxy_ports", "add_capabilities", "drop_capabilities",
                     "pod_spec", "slurm", "pbs"},
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

  if (!Has(section, "force_pull_image") && defaults.value("force_pull_image", json()).is_boolean()) {
    section["force_pull_image"] = defaults.at("force_pull_image");
  }
  env.force_pull_image =
      ReadBool(section, "force_pull_image", kPath, problems).value_or(false);
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

  if (Has(section, "proxy_ports") && !section.at("proxy_ports").is_array()) {
    problems->Add(JoinPath(kPath, "proxy_ports"), "must be a list", section.at("proxy_ports"));
  }
  if (!Has(section, "proxy_ports")) out["proxy_ports"] = json::array();
  if (!Has(section, "pod_spec")) out["pod_spec"] = nullptr;
  else if (!section.at("pod_spec").is_object()) {
    problems->Add(JoinPath(kPath, "pod_spec"), "must be a map", section.at("pod_spec"));
  }
  return env;
}

}  // namespace det::master::config::internal
