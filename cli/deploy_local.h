#pragma once
// `det deploy local cluster-up / cluster-down`: a master and N agents as background processes
// on this host, without Docker. Each process is started detached (double fork, its own process
// group, stdin from /dev/null, stdout+stderr appended to <data-dir>/<name>.log) and its pid is
// written to <data-dir>/<name>.pid. cluster-down signals each recorded process group (SIGTERM,
// then SIGKILL after 10 s) and removes the pid files.

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "common/spawn_detached.h"
#include "common/status.h"

namespace det::cli {

struct ClusterUpOptions {
  int master_port = 8080;
  int agents = 1;
  int slots_per_agent = 1;
  std::string data_dir;            // default: DefaultDataDir()
  std::string master_config_path;  // optional
  std::string resource_pool;       // agents join this pool; empty: the master's default
  // "sqlite" (default): the master's embedded store; "postgres": a PostgreSQL started under
  // <data dir>/postgres by det-postgres (stopped by cluster-down); a postgres:// URL: an
  // existing database, passed to the master as is (cluster-down leaves its server alone);
  // empty (no --db): the store the data dir recorded (<data dir>/store.json), else sqlite.
  std::string db;
  // agent: the master and agents; slurm: a local Slurm (deploy_local_slurm.h) and the master.
  std::string resource_manager = "agent";
  // HTTPS: the master's certificate and key (cluster-up, master-up); agent-up needs only the
  // certificate. Clients trust $DET_MASTER_CERT_FILE, else this certificate (self-signed).
  std::string tls_cert;
  std::string tls_key;
  double master_timeout_s = 60;
  double agents_timeout_s = 60;
};

// $XDG_DATA_HOME/determined, else ~/.local/share/determined.
std::string DefaultDataDir();

// Finds `name` next to the running executable, else on $PATH.
Result<std::string> FindSiblingBinary(const std::string& name);

// Starts `argv` detached, logging to `log_path`; returns its pid (also its process group id).
using ::det::SpawnDetached;

// Reads a pid file; nullopt when missing or malformed.
std::optional<pid_t> ReadPidFile(const std::string& path);

// True if `pid` is alive and its command line mentions `needle` (guards against reused pids).
bool ProcessMatches(pid_t pid, const std::string& needle);

// "https://127.0.0.1:P" with a certificate, else "http://127.0.0.1:P".
std::string LocalMasterUrl(const ClusterUpOptions& options);
// The cluster's agent secret, <data_dir>/agent_token, made on first use.
Result<std::string> LocalAgentTokenFile(const std::string& data_dir);

Status ClusterUp(const ClusterUpOptions& options);
Status ClusterDown(const std::string& data_dir);
// The pieces of cluster-up/down, each also a `det deploy local` command. An empty data dir means
// DefaultDataDir().
Status MasterUp(const ClusterUpOptions& options);
Status MasterDown(const std::string& data_dir);
// Starts agents agent-1..agent-N that are not already running and waits until N are connected.
Status AgentsUp(const ClusterUpOptions& options);
// Stops every agent, or only `agent_id` when it is not empty.
Status AgentDown(const std::string& data_dir, const std::string& agent_id);

}  // namespace det::cli
