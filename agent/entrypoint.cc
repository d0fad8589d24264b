#include "agent/entrypoint.h"

#include <charconv>
#include <regex>

#include "agent/warm_python.h"

extern char** environ;

namespace det::agent {

Result<MasterAddress> ParseMasterUrl(const std::string& url) {
  MasterAddress out;
  out.url = url;
  while (!out.url.empty() && out.url.back() == '/') out.url.pop_back();
  std::string rest = out.url;
  size_t scheme_end = rest.find("://");
  if (scheme_end == std::string::npos) {
    out.scheme = "http";
    out.url = "http://" + out.url;
  } else {
    out.scheme = rest.substr(0, scheme_end);
    rest = rest.substr(scheme_end + 3);
  }
  if (out.scheme != "http" && out.scheme != "https") {
    return InvalidArgument("master url " + url + ": unsupported scheme " + out.scheme);
  }
  rest = rest.substr(0, rest.find('/'));
  std::string port_text;
  if (!rest.empty() && rest.front() == '[') {  // [ipv6]:port
    size_t close = rest.find(']');
    if (close == std::string::npos) return InvalidArgument("master url " + url + ": bad host");
    out.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size() && rest[close + 1] == ':') port_text = rest.substr(close + 2);
  } else {
    size_t colon = rest.find(':');
    out.host = rest.substr(0, colon);
    if (colon != std::string::npos) port_text = rest.substr(colon + 1);
  }
  if (out.host.empty()) return InvalidArgument("master url " + url + ": missing host");
  if (port_text.empty()) {
    out.port = out.scheme == "https" ? 443 : 80;
  } else {
    auto [ptr, ec] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), out.port);
    if (ec != std::errc() || ptr != port_text.data() + port_text.size() || out.port <= 0 ||
        out.port > 65535) {
      return InvalidArgument("master url " + url + ": bad port " + port_text);
    }
  }
  return out;
}

bool IsLegacyTrialEntrypoint(const std::string& entrypoint) {
  static const std::regex kLegacy("^[a-zA-Z0-9_.]+:[a-zA-Z0-9_]+$");
  return std::regex_match(entrypoint, kLegacy);
}

Result<std::vector<std::string>> BuildEntrypointArgv(const nlohmann::json& entrypoint,
                                                     const std::string& python) {
  if (entrypoint.is_array()) {
    std::vector<std::string> argv;
    for (const auto& item : entrypoint) {
      if (!item.is_string()) return InvalidArgument("entrypoint list items must be strings");
      argv.push_back(item.get<std::string>());
    }
    if (argv.empty()) return InvalidArgument("entrypoint is an empty list");
    return argv;
  }
  if (!entrypoint.is_string()) return InvalidArgument("entrypoint must be a string or a list");
  std::string text = entrypoint.get<std::string>();
  if (text.empty()) return InvalidArgument("entrypoint is empty");
  if (IsLegacyTrialEntrypoint(text)) {
    // As Determined: the legacy Trial class runs under the torch_distributed launcher, which
    // starts one worker per slot (one for a single-slot trial).
    return std::vector<std::string>{python, "-m",      "determined.launch.torch_distributed",
                                    "--",   "--trial", text};
  }
  return std::vector<std::string>{"sh", "-c", text};
}

std::vector<std::string> WrapWithStartupHook(const std::vector<std::string>& argv) {
  std::vector<std::string> out = {
      "/bin/sh", "-c",
      // The pool's or master's task_container_defaults.startup_hook first, in the same shell
      // (what it exports reaches the entrypoint), then the context's startup-hook.sh.
      "if [ -n \"${DET_TCD_STARTUP_HOOK:-}\" ]; then eval \"$DET_TCD_STARTUP_HOOK\" || exit $?; "
      "fi; if [ -f ./startup-hook.sh ]; then . ./startup-hook.sh || exit $?; fi; exec \"$@\"",
      "det-entrypoint"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::string PythonFor(const std::map<std::string, std::string>& command_env,
                      const std::string& fallback) {
  auto it = command_env.find("DET_PYTHON_EXECUTABLE");
  if (it != command_env.end() && !it->second.empty()) return it->second;
  return fallback;
}

std::map<std::string, std::string> BuildProcessEnv(
    const std::map<std::string, std::string>& base,
    const std::map<std::string, std::string>& command_env, const AgentEnv& agent) {
  std::map<std::string, std::string> env = base;
  for (const auto& [k, v] : command_env) env[k] = v;

  env["DET_MASTER"] = agent.master.url;
  env["DET_MASTER_HOST"] = agent.master.host;
  env["DET_MASTER_ADDR"] = agent.master.host;
  env["DET_MASTER_PORT"] = std::to_string(agent.master.port);
  env["DET_CLUSTER_ID"] = agent.cluster_id;
  env["DET_MASTER_ID"] = agent.master_id;
  env["DET_AGENT_ID"] = agent.agent_id;
  env["DET_CONTAINER_ID"] = agent.allocation_id;
  env["DET_SLOT_IDS"] = nlohmann::json(agent.slot_ids).dump();
  env["DET_WORKDIR"] = agent.workdir;
  env["PYTHONUNBUFFERED"] = "1";
  if (!agent.gpu_uuids.empty()) {
    std::string devices;
    for (const auto& uuid : agent.gpu_uuids) {
      if (!devices.empty()) devices += ",";
      devices += uuid;
    }
    env["CUDA_VISIBLE_DEVICES"] = devices;
  }
  if (command_env.find("DET_PYTHON_EXECUTABLE") == command_env.end() && !agent.python.empty()) {
    env["DET_PYTHON_EXECUTABLE"] = agent.python;
  }
  // Entrypoints say `python3 train.py`: make that the interpreter this agent runs trials with.
  if (auto py = env.find("DET_PYTHON_EXECUTABLE"); py != env.end()) {
    size_t slash = py->second.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      std::string dir = py->second.substr(0, slash);
      auto path = env.find("PATH");
      env["PATH"] = path == env.end() || path->second.empty() ? dir : dir + ":" + path->second;
    }
  }
  // Last, so a `det` the task's own PATH names comes first (Determined's images carry one).
  if (!agent.cli_dir.empty()) {
    std::string& path = env["PATH"];
    if (path.empty()) {
      path = agent.cli_dir;
    } else if (path != agent.cli_dir && !path.ends_with(":" + agent.cli_dir)) {
      path += ":" + agent.cli_dir;
    }
  }
  if (!agent.harness_path.empty()) {
    auto it = env.find("PYTHONPATH");
    if (it == env.end() || it->second.empty()) {
      env["PYTHONPATH"] = agent.harness_path;
    } else {
      it->second = agent.harness_path + ":" + it->second;
    }
  }
  return env;
}

std::map<std::string, std::string> ZygoteEnvironment(const std::map<std::string, std::string>& base,
                                                     const std::string& python,
                                                     const std::string& harness_path,
                                                     const std::string& data_dir,
                                                     const std::string& cli_dir) {
  AgentEnv agent;
  agent.harness_path = harness_path;
  agent.cli_dir = cli_dir;
  agent.python = python;
  std::map<std::string, std::string> env = BuildProcessEnv(base, {}, agent);
  for (auto it = env.begin(); it != env.end();) {
    if (it->first.rfind("DET_", 0) != 0 || it->first == "DET_PYTHON_EXECUTABLE") {
      ++it;
    } else if (auto from_base = base.find(it->first); from_base != base.end()) {
      it->second = from_base->second;
      ++it;
    } else {
      it = env.erase(it);
    }
  }
  env[kZygoteMarkerEnv] = data_dir;
  return env;
}

std::map<std::string, std::string> CurrentEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

}  // namespace det::agent
