#include "agent/launcher/container_args.h"

#include <algorithm>
#include <cctype>

#include "common/base64.h"

namespace det::agent {
namespace {

using nlohmann::json;

Result<std::vector<std::string>> StringList(const json& j, const std::string& key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) return InvalidArgument("container." + key + ": must be a list of strings");
  for (const auto& v : *it) {
    if (!v.is_string()) return InvalidArgument("container." + key + ": must be a list of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::string RegistryOf(const std::string& image) {
  size_t slash = image.find('/');
  if (slash == std::string::npos) return "docker.io";
  std::string first = image.substr(0, slash);
  if (first == "localhost" || first.find('.') != std::string::npos ||
      first.find(':') != std::string::npos) {
    return first;
  }
  return "docker.io";
}

}  // namespace

Result<ContainerSpec> ParseContainerSpec(const json& j) {
  if (!j.is_object()) return InvalidArgument("container: must be an object");
  ContainerSpec spec;
  auto image = j.find("image");
  if (image == j.end() || !image->is_string() || image->get<std::string>().empty()) {
    return InvalidArgument("container.image: required (a non-empty string)");
  }
  spec.image = image->get<std::string>();
  if (auto it = j.find("forcePull"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return InvalidArgument("container.forcePull: must be a boolean");
    spec.force_pull = it->get<bool>();
  }
  if (auto it = j.find("registryAuth"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) return InvalidArgument("container.registryAuth: must be an object");
    spec.registry_auth = *it;
  }
  if (auto it = j.find("bindMounts"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return InvalidArgument("container.bindMounts: must be a list");
    for (size_t i = 0; i < it->size(); ++i) {
      const json& m = (*it)[i];
      std::string where = "container.bindMounts[" + std::to_string(i) + "]";
      if (!m.is_object()) return InvalidArgument(where + ": must be an object");
      ContainerBindMount b;
      b.host_path = m.value("hostPath", "");
      b.container_path = m.value("containerPath", "");
      if (b.host_path.empty() || b.host_path[0] != '/') {
        return InvalidArgument(where + ".hostPath: must be an absolute path");
      }
      if (b.container_path.empty() || b.container_path[0] != '/') {
        return InvalidArgument(where + ".containerPath: must be an absolute path");
      }
      for (const std::string& p : {b.host_path, b.container_path}) {
        if (p.find(',') != std::string::npos || p.find(':') != std::string::npos) {
          return InvalidArgument(where + ": paths must not hold ',' or ':' (got \"" + p + "\")");
        }
      }
      b.read_only = m.value("readOnly", false);
      b.propagation = m.value("propagation", "");
      static const std::vector<std::string> kPropagations = {
          "", "private", "rprivate", "shared", "rshared", "slave", "rslave"};
      if (std::find(kPropagations.begin(), kPropagations.end(), b.propagation) ==
          kPropagations.end()) {
        return InvalidArgument(where +
                               ".propagation: must be one of private, rprivate, shared, "
                               "rshared, slave, rslave (got \"" +
                               b.propagation + "\")");
      }
      spec.bind_mounts.push_back(std::move(b));
    }
  }
  if (auto it = j.find("shmSizeBytes"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0) {
      return InvalidArgument("container.shmSizeBytes: must be a non-negative integer");
    }
    spec.shm_size_bytes = it->get<int64_t>();
  }
  DET_ASSIGN_OR_RETURN(spec.devices, StringList(j, "devices"));
  DET_ASSIGN_OR_RETURN(spec.add_capabilities, StringList(j, "addCapabilities"));
  DET_ASSIGN_OR_RETURN(spec.drop_capabilities, StringList(j, "dropCapabilities"));
  return spec;
}

std::string ContainerName(const std::string& allocation_id) {
  std::string name = "det-";
  for (char c : allocation_id) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    name += ok ? c : '_';
  }
  return name;
}

std::string ContainerAgentLabel(const std::string& data_dir) {
  return "ai.determined.agent-data=" + data_dir;
}

std::vector<std::string> BuildContainerRunArgv(const ContainerRun& run, const ContainerSpec& spec,
                                               const std::vector<std::string>& argv) {
  std::vector<std::string> out = {run.runtime};
  const bool podman = run.runtime.find("docker") == std::string::npos;
  if (podman && !run.oci_runtime.empty()) {
    out.push_back("--runtime");
    out.push_back(run.oci_runtime);
  }
  out.insert(out.end(),
             {"run", "--rm", "--name", run.name, "--label", ContainerAgentLabel(run.data_dir),
              "--label", "ai.determined.allocation=" + run.allocation_id,
              // Trials reach the master and each other (rendezvous) on host addresses.
              "--network", "host",
              // Signals go through `kill` on the container (see ContainerLauncher).
              "--sig-proxy=false", "--pull", spec.force_pull ? "always" : "missing"});
  if (podman && !run.authfile.empty()) {
    out.push_back("--authfile");
    out.push_back(run.authfile);
  }
  auto mount = [&](const std::string& host, const std::string& container, bool ro,
                   const std::string& propagation) {
    std::string opts;
    if (ro) opts += "ro";
    if (!propagation.empty()) opts += (opts.empty() ? "" : ",") + propagation;
    out.push_back("-v");
    out.push_back(host + ":" + container + (opts.empty() ? "" : ":" + opts));
  };
  mount(run.workdir, run.workdir, false, "");
  if (!run.harness_path.empty()) mount(run.harness_path, run.harness_path, true, "");
  for (const auto& b : spec.bind_mounts) {
    mount(b.host_path, b.container_path, b.read_only, b.propagation);
  }
  out.push_back("-w");
  out.push_back(run.workdir);
  if (spec.shm_size_bytes) {
    out.push_back("--shm-size");
    out.push_back(std::to_string(*spec.shm_size_bytes) + "b");
  }
  for (const auto& d : spec.devices) {
    out.push_back("--device");
    out.push_back(d);
  }
  for (const auto& c : spec.add_capabilities) {
    out.push_back("--cap-add");
    out.push_back(c);
  }
  for (const auto& c : spec.drop_capabilities) {
    out.push_back("--cap-drop");
    out.push_back(c);
  }
  if (!run.gpu_uuids.empty()) {
    if (podman) {
      for (const auto& uuid : run.gpu_uuids) {
        out.push_back("--device");
        out.push_back("nvidia.com/gpu=" + uuid);
      }
    } else {
      std::string ids;
      for (const auto& uuid : run.gpu_uuids) ids += (ids.empty() ? "" : ",") + uuid;
      out.push_back("--gpus");
      out.push_back("\"device=" + ids + "\"");
    }
  }
  for (const auto& name : run.env_names) {
    out.push_back("-e");
    out.push_back(name);
  }
  out.push_back(spec.image);
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::vector<std::string> BuildContainerKillArgv(const std::string& runtime, const std::string& name,
                                                int signo) {
  return {runtime, "kill", "--signal", std::to_string(signo), name};
}

Result<std::string> RegistryAuthFile(const json& auth, const std::string& image) {
  if (!auth.is_object()) return InvalidArgument("registry_auth: must be an object");
  std::string server;
  for (const char* key : {"serveraddress", "server"}) {
    if (server.empty() && auth.value(key, json()).is_string()) server = auth[key];
  }
  if (server.empty()) server = RegistryOf(image);
  for (const char* prefix : {"https://", "http://"}) {
    if (server.rfind(prefix, 0) == 0) server = server.substr(std::string(prefix).size());
  }
  while (!server.empty() && server.back() == '/') server.pop_back();
  json entry = json::object();
  if (auth.value("auth", json()).is_string()) {
    entry["auth"] = auth["auth"];
  } else if (auth.value("username", json()).is_string() &&
             auth.value("password", json()).is_string()) {
    entry["auth"] = Base64Encode(auth["username"].get<std::string>() + ":" +
                                 auth["password"].get<std::string>());
  } else if (auth.value("identitytoken", json()).is_string()) {
    entry["identitytoken"] = auth["identitytoken"];
  } else if (auth.value("registrytoken", json()).is_string()) {
    entry["registrytoken"] = auth["registrytoken"];
  } else {
    return InvalidArgument(
        "registry_auth: needs username and password, auth, identitytoken or registrytoken");
  }
  if (auth.value("email", json()).is_string()) entry["email"] = auth["email"];
  return json({{"auths", {{server, entry}}}}).dump(2);
}

std::map<std::string, std::string> ContainerEnvironment(
    const std::map<std::string, std::string>& command_env, AgentEnv agent) {
  agent.python.clear();  // the image's python, not the host's
  std::map<std::string, std::string> env = BuildProcessEnv({}, command_env, agent);
  if (!command_env.count("PATH")) env.erase("PATH");
  return env;
}

}  // namespace det::agent
