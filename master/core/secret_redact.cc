#include "master/core/secret_redact.h"

#include <set>

namespace det::master::core {

using nlohmann::json;

namespace {

// The "NAME=VALUE" entries of an environment_variables value: a list, or {cpu, cuda, rocm}.
void CollectVariables(const json& ev, std::set<std::string>* out) {
  if (ev.is_array()) {
    for (const auto& kv : ev) {
      if (kv.is_string()) out->insert(kv.get<std::string>());
    }
  } else if (ev.is_object()) {
    for (const auto& [device, list] : ev.items()) CollectVariables(list, out);
  }
}

void MaskVariables(json& ev, const std::set<std::string>& from_master) {
  if (ev.is_array()) {
    for (auto& kv : ev) {
      if (!kv.is_string() || !from_master.count(kv.get<std::string>())) continue;
      std::string s = kv.get<std::string>();
      size_t eq = s.find('=');
      kv = (eq == std::string::npos ? s : s.substr(0, eq)) + "=" + kRedacted;
    }
  } else if (ev.is_object()) {
    for (auto& [device, list] : ev.items()) MaskVariables(list, from_master);
  }
}

}  // namespace

bool IsSecretKey(const std::string& key) {
  return key.find("password") != std::string::npos || key.find("secret") != std::string::npos ||
         key.find("token") != std::string::npos || key == "access_key" || key == "signing_key" ||
         key == "connection_string" || key == "credential";
}

void RedactSecrets(json& j) {
  if (j.is_object()) {
    for (auto& [k, v] : j.items()) {
      if (IsSecretKey(k) && !v.is_null() && !v.is_object()) {
        v = kRedacted;
      } else {
        RedactSecrets(v);
      }
    }
  } else if (j.is_array()) {
    for (auto& e : j) RedactSecrets(e);
  }
}

json ShownConfig(const json& config, const json& master_task_defaults) {
  json out = config;
  if (!out.is_object()) return out;
  if (out.contains("checkpoint_storage")) RedactSecrets(out["checkpoint_storage"]);
  if (!out.contains("environment") || !out["environment"].is_object()) return out;
  json& env = out["environment"];
  if (env.contains("registry_auth")) RedactSecrets(env["registry_auth"]);
  std::set<std::string> from_master;
  if (master_task_defaults.is_object() && master_task_defaults.contains("environment_variables")) {
    CollectVariables(master_task_defaults["environment_variables"], &from_master);
  }
  if (!from_master.empty() && env.contains("environment_variables")) {
    MaskVariables(env["environment_variables"], from_master);
  }
  return out;
}

}  // namespace det::master::core
