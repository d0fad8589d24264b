#include "master/server/task_container.h"

#include "master/config/environment_parse.h"
#include "master/config/problems.h"
#include "master/config/resources_parse.h"
#include "master/server/container_spec.h"
#include "master/server/task_config.h"

namespace det::master::server {

using nlohmann::json;

namespace {

json Section(const json& config, const char* key) {
  if (!config.is_object() || !config.contains(key)) return json();
  return config.at(key);
}

}  // namespace

Result<TaskMounts> PlanTaskMounts(const json& config, const std::string& device) {
  namespace ci = config::internal;
  ci::Problems problems;
  config::ExperimentConfig cfg;
  json env_out;
  cfg.environment =
      ci::ParseEnvironment(Section(config, "environment"), json(), &env_out, &problems);
  json mounts = ci::ParseBindMounts(Section(config, "bind_mounts"), &problems);
  DET_RETURN_IF_ERROR(problems.ToStatus());
  json resources = Section(config, "resources");
  if (resources.is_object()) {
    cfg.resources.shm_size = resources.value("shm_size", json());
    if (resources.contains("devices") && resources["devices"].is_array()) {
      cfg.resources.devices = resources["devices"];
    }
  }
  TaskMounts out;
  for (size_t i = 0; i < mounts.size(); ++i) {
    const json& m = mounts[i];
    config::BindMount b;
    b.host_path = m.value("host_path", "");
    b.container_path = m.value("container_path", "");
    b.read_only = m.value("read_only", false);
    b.propagation = m.value("propagation", "rprivate");
    std::string where = "bind_mounts[" + std::to_string(i) + "]";
    if (b.container_path.empty() || b.container_path[0] != '/') {
      std::string rel = b.container_path;
      while (rel.size() > 1 && rel.back() == '/') rel.pop_back();
      out.links.emplace_back(rel, b.host_path);
      b.container_path = b.host_path;  // in a container: mounted where the link points
    } else if (b.container_path != b.host_path) {
      out.notes.push_back(where + ": " + b.host_path + " is not mounted at " + b.container_path +
                          " for a task that runs as a process (no image): it reads the agent's "
                          "files at their own paths; use a relative container_path for a link "
                          "in its working directory, or an image to mount it");
    }
    cfg.bind_mounts.push_back(std::move(b));
  }
  DET_ASSIGN_OR_RETURN(out.container, ContainerSpecFor(cfg, device));
  if (out.container) out.notes.clear();  // the container runtime mounts every one of them
  return out;
}

std::string LinkCommands(const std::vector<std::pair<std::string, std::string>>& links) {
  std::string out;
  for (const auto& [rel, host] : links) {
    size_t slash = rel.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      out += "mkdir -p " + ShellQuote(rel.substr(0, slash)) + " && ";
    }
    out += "ln -sfn " + ShellQuote(host) + " " + ShellQuote(rel) + " && ";
  }
  return out;
}

}  // namespace det::master::server
