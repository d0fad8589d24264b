#pragma once
// AgentConfig: everything the agent is told at startup; built once by main and passed down.

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "agent/log_shipper.h"

namespace det::agent {

inline constexpr char kAgentVersion[] = "0.38.1";

struct AgentConfig {
  // Where the master listens; also what processes get as DET_MASTER.
  std::string master_url = "http://127.0.0.1:8080";
  // Default: the hostname.
  std::string agent_id;
  std::string hostname;
  std::string resource_pool = "default";
  // Work directories live in <data_dir>/work/<allocationId>. Should be absolute.
  std::string data_dir = "./agent-data";
  // Prepended to PYTHONPATH of every process; empty: left alone.
  std::string harness_path;
  // Appended to PATH of every process (the `det` built beside the agent); empty: left alone.
  std::string cli_dir;
  // DET_PYTHON_EXECUTABLE unless the start command sets it.
  std::string python = "/usr/bin/python3";
  // timeoutSeconds of the command long poll.
  int poll_timeout_seconds = 30;
  std::string version = kAgentVersion;
  // Retry backoff for register, poll, events and context downloads.
  std::chrono::milliseconds retry_initial{200};
  std::chrono::milliseconds retry_max{5000};
  // On Stop(): how long to wait for killed processes, their logs and their exit events.
  std::chrono::milliseconds shutdown_grace{10000};
  // On Stop(): wait for the outstanding long poll to return (tests) instead of leaving the
  // polling thread behind (main, which exits right after Run()).
  bool wait_for_poll_on_shutdown = false;
  LogShipperOptions log_options;
  // Python entrypoints start as forks of a warm interpreter with these modules imported
  // (docs/operations.md, "Warm Python"); false: every process is started cold.
  bool warm_python = true;
  // Serve one allocation, then stop (the agent a Slurm job runs on each of its nodes).
  bool exit_after_allocation = false;
  std::vector<std::string> warm_python_preload = {"determined"};
  // Bytes of experiment contexts kept in memory for the next trial of the same experiment
  // (context_cache.h); 0 downloads the context for every trial.
  size_t context_cache_bytes = size_t{128} << 20;
  // "podman" or "docker": what runs allocations that name an image (detected at startup, see
  // detect/container_runtime.h); empty: none, and such allocations fail with a clear error.
  std::string container_runtime;
  // podman's --runtime (OCI runtime) for containers; empty: podman's default.
  std::string podman_oci_runtime = "runc";
  // The cluster agent secret (--agent-token-file) and this agent's own key (kept in
  // <data_dir>/agent.key), sent on every agent route; empty: not sent.
  std::string agent_secret;
  std::string agent_key;
};

// The headers that prove who the agent is (master/server/agent_credential_service.h).
inline std::map<std::string, std::string> AgentCredentialHeaders(const AgentConfig& config) {
  std::map<std::string, std::string> out;
  if (!config.agent_secret.empty()) out["X-Det-Agent-Secret"] = config.agent_secret;
  if (!config.agent_key.empty()) out["X-Det-Agent-Key"] = config.agent_key;
  return out;
}

}  // namespace det::agent
