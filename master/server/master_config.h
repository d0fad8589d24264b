#pragma once
// MasterConfig: the master's settings, from defaults <- YAML file <- command-line flags.
// Validated once at startup and passed down; never looked up globally.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/scheduler/pool_config.h"
#include "master/slurm/slurm_config.h"

namespace det::master::server {

struct MasterConfig {
  int port = 8080;  // Default: 8080
  std::string bind_address = "127.0.0.1";
  std::string data_dir = "./det-data";  // SQLite db, default checkpoints
  std::string store = "sqlite";         // sqlite (postgres: later)
  std::string db_path;                  // Default: <data_dir>/determined.db
  // db.synchronous: "full" syncs SQLite's log at every commit (a commit survives power loss);
  // "normal" at checkpoints only (a commit survives kill -9; power loss may take the latest).
  std::string db_synchronous = "full";
  // Metric report batches only (SQLite): "normal" survives kill -9, "full" also power loss.
  std::string db_metrics_synchronous = "normal";
  std::string cluster_name;
  std::optional<std::string> initial_user_password;
  int64_t token_lifetime_seconds = 7 * 24 * 3600;  // security.token_lifetime: login sessions
  nlohmann::json checkpoint_storage;   // Default: shared_fs under <data_dir>/checkpoints
  // checkpoint_storage_allowed_roots: the only directories (absolute) under which an
  // experiment's shared_fs host_path/storage_path or directory container_path may lie, since
  // the master reads and deletes checkpoints there. FinalizeMasterConfig normalizes them and
  // always adds the master's own checkpoint_storage directory (alone by default), so a
  // finalized config always has a value (empty: no file storage path is allowed, e.g. an s3
  // master without roots). Unset (a config never finalized, in tests): no limit.
  std::optional<std::vector<std::string>> checkpoint_storage_allowed_roots;
  int64_t agent_timeout_seconds = 30;  // an agent silent this long is considered lost
  int64_t preemption_timeout_seconds = 3600;
  nlohmann::json task_container_defaults;  // merged under each experiment's environment etc.
  std::string log_level = "info";
  std::string python;       // runs the checkpoint GC task. Default: DefaultPythonExecutable()
  std::string harness_dir;  // the Python package. Default: HarnessDirNearExecutable()
  std::string webui_dir;    // the built web UI (index.html). Default: WebUiDirNearExecutable()
  // `resource_manager` and `resource_pools` as written (the legacy top-level `scheduler` is
  // folded into resource_manager.scheduler); parsed into `pools` by FinalizeMasterConfig.
  nlohmann::json resource_manager;
  nlohmann::json resource_pools;
  scheduler::ResourcePoolsConfig pools;
  // Set when resource_manager.type is slurm: every pool is a Slurm partition.
  std::optional<slurm::SlurmConfig> slurm;
  // security.tls.cert / security.tls.key: PEM files; both set: the master serves HTTPS only.
  std::string tls_cert;
  std::string tls_key;
  // security.agent_token (the secret itself) or security.agent_token_file (a file holding it):
  // agents must present it to register, poll and post events. Empty: agents are not
  // authenticated (loopback-only clusters; the master warns at startup).
  std::string agent_token;
  std::string agent_token_file;
  // webhooks.signing_key: the HMAC-SHA256 key of every delivery's X-Determined-AI-Signature
  // (empty: signed with an empty key, as Determined); webhooks.base_url: the web UI's address,
  // for links in Slack messages.
  std::string webhooks_signing_key;
  std::string webhooks_base_url;
};

// Applies a YAML document (the master.yaml format) over `config`. Unknown keys are errors.
Status ApplyMasterYaml(const std::string& yaml_text, MasterConfig* config);
// security.token_lifetime: seconds (a number, or "90s", "30m", "12h", "7d"), positive.
Result<int64_t> ParseTokenLifetime(const nlohmann::json& value);
// Fills derived defaults (db path, checkpoint storage) and validates.
Status FinalizeMasterConfig(MasterConfig* config);

// The task_container_defaults of the tasks and trials of `pool`: the pool's over the master's
// (config::MergeTaskContainerDefaults); null when neither has any.
nlohmann::json TaskContainerDefaultsFor(const nlohmann::json& master_tcd,
                                        const scheduler::ResourcePoolsConfig& pools,
                                        const std::string& pool);
// What the experiment configs shown to users mask (core::ShownConfig): the environment variables
// of the master's task_container_defaults and of every pool's, which are the admin's.
nlohmann::json TaskDefaultsToMask(const nlohmann::json& master_tcd,
                                  const scheduler::ResourcePoolsConfig& pools);
// The startup_hook of such defaults: shell text run before a task's or trial's entrypoint (and
// before its context's startup-hook.sh), handed to the agent as DET_TCD_STARTUP_HOOK; "" none.
std::string TcdStartupHook(const nlohmann::json& tcd);

}  // namespace det::master::server
