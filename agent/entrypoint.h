#pragma once
// Pure helpers that turn a start command into argv and environment for the trial process.

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace det::agent {

// `http://host:port/...` split into what the DET_MASTER_* variables need.
struct MasterAddress {
  std::string url;     // as given, without a trailing slash
  std::string scheme;  // "http" or "https"
  std::string host;
  int port = 0;  // the explicit port, else 80 / 443
};

Result<MasterAddress> ParseMasterUrl(const std::string& url);

// True for `module.path:ClassName` (legacy Trial class entrypoints).
bool IsLegacyTrialEntrypoint(const std::string& entrypoint);

// A JSON list -> argv; a legacy `module:Class` string -> `python -m
// determined.launch.torch_distributed -- --trial module:Class`; any other string -> `sh -c
// <string>`. Fails on an empty or ill-typed value.
Result<std::vector<std::string>> BuildEntrypointArgv(const nlohmann::json& entrypoint,
                                                     const std::string& python);

// Wraps argv so that $DET_TCD_STARTUP_HOOK (the task_container_defaults startup_hook, when set)
// and then ./startup-hook.sh (relative to the working directory, when it exists) run first in
// the shell that execs argv; a failing hook ends the run with its status.
std::vector<std::string> WrapWithStartupHook(const std::vector<std::string>& argv);

// What the agent adds to the environment of every process it starts.
struct AgentEnv {
  MasterAddress master;
  std::string cluster_id;
  std::string master_id;
  std::string agent_id;
  std::string allocation_id;           // also DET_CONTAINER_ID
  std::vector<int> slot_ids;           // DET_SLOT_IDS
  std::vector<std::string> gpu_uuids;  // CUDA_VISIBLE_DEVICES when non-empty
  std::string workdir;                 // DET_WORKDIR
  std::string harness_path;            // prepended to PYTHONPATH when non-empty
  std::string python;                  // DET_PYTHON_EXECUTABLE unless the command sets it
  std::string cli_dir;                 // appended to PATH when non-empty (`det` in tasks)
};

// base (the agent's own environment) < the command's env < the agent's variables.
std::map<std::string, std::string> BuildProcessEnv(
    const std::map<std::string, std::string>& base,
    const std::map<std::string, std::string>& command_env, const AgentEnv& agent);

// The environment of the agent's warm interpreter: `base` with what BuildProcessEnv adds to
// every process that is the same for all of them (PYTHONPATH, PATH, PYTHONUNBUFFERED,
// DET_PYTHON_EXECUTABLE), none of the per-allocation DET_* variables, and kZygoteMarkerEnv set
// to `data_dir`.
std::map<std::string, std::string> ZygoteEnvironment(const std::map<std::string, std::string>& base,
                                                     const std::string& python,
                                                     const std::string& harness_path,
                                                     const std::string& data_dir,
                                                     const std::string& cli_dir = "");

// The python the entrypoint uses: the command's DET_PYTHON_EXECUTABLE, else `fallback`.
std::string PythonFor(const std::map<std::string, std::string>& command_env,
                      const std::string& fallback);

// The current process environment as a map.
std::map<std::string, std::string> CurrentEnvironment();

}  // namespace det::agent
