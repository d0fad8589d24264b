#include "master/server/master_config.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "common/paths.h"
#include "common/secret_file.h"
#include "master/config/experiment_config.h"
#include "master/config/storage_roots.h"
#include "master/config/task_container_defaults.h"
#include "master/server/db_config.h"
#include "master/server/static_files.h"

namespace det::master::server {

using nlohmann::json;

Result<int64_t> ParseTokenLifetime(const json& value) {
  const std::string rule =
      "security.token_lifetime: must be a positive number of seconds or a duration such as "
      "\"30m\", \"12h\", \"7d\"";
  int64_t seconds = 0;
  if (value.is_number_integer()) {
    seconds = value.get<int64_t>();
  } else if (value.is_string()) {
    std::string s = value.get<std::string>();
    size_t used = 0;
    long long n = 0;
    try {
      n = std::stoll(s, &used);
    } catch (const std::exception&) {
      return InvalidArgument(rule + " (got \"" + s + "\")");
    }
    std::string unit = s.substr(used);
    static const std::map<std::string, int64_t> kUnits = {
        {"", 1}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}};
    auto it = kUnits.find(unit);
    if (it == kUnits.end() || n > (int64_t{1} << 40)) {
      return InvalidArgument(rule + " (got \"" + s + "\")");
    }
    seconds = n * it->second;
  } else {
    return InvalidArgument(rule + " (got " + value.dump() + ")");
  }
  if (seconds <= 0 || seconds > (int64_t{1} << 40)) {
    return InvalidArgument(rule + " (got " + value.dump() + ")");
  }
  return seconds;
}

namespace {

// security.tls and security.agent_token(_file); returns error lines.
std::string ApplySecurityTransport(const json& security, MasterConfig* config) {
  std::string errors;
  if (!security.is_object()) return "security: must be a mapping\n";
  if (security.contains("tls") && !security["tls"].is_null()) {
    const json& tls = security["tls"];
    if (!tls.is_object()) return "security.tls: must be a mapping with cert and key\n";
    for (const char* key : {"cert", "key"}) {
      if (!tls.contains(key) || tls[key].is_null()) continue;
      if (!tls[key].is_string()) {
        errors += std::string("security.tls.") + key + ": must be a file path (a string)\n";
      } else {
        (std::string(key) == "cert" ? config->tls_cert : config->tls_key) = tls[key];
      }
    }
  }
  for (const char* key : {"agent_token", "agent_token_file"}) {
    if (!security.contains(key) || security[key].is_null()) continue;
    if (!security[key].is_string()) {
      errors += std::string("security.") + key + ": must be a string\n";
    } else {
      (std::string(key) == "agent_token" ? config->agent_token : config->agent_token_file) =
          security[key];
    }
  }
  return errors;
}

}  // namespace

Status ApplyMasterYaml(const std::string& yaml_text, MasterConfig* config) {
  DET_ASSIGN_OR_RETURN(json doc, config::YamlToJson(yaml_text));
  if (doc.is_null()) return Status::Ok();
  if (!doc.is_object()) return InvalidArgument("master config: must be a mapping");
  static const std::set<std::string> kKnown = {"port",
                                               "bind_address",
                                               "data_dir",
                                               "db",
                                               "cluster_name",
                                               "security",
                                               "checkpoint_storage",
                                               "checkpoint_storage_allowed_roots",
                                               "agent_timeout",
                                               "task_container_defaults",
                                               "log",
                                               "resource_manager",
                                               "resource_pools",
                                               "scheduler",
                                               "root",
                                               "telemetry",
                                               "webhooks",
                                               "webui_dir",
                                               // Determined's keys with nothing to configure
                                               // here (docs/operations.md): accepted, checked.
                                               "scim",
                                               "cache",
                                               "launch_error"};
  std::string errors;
  for (auto& [k, v] : doc.items()) {
    if (!kKnown.count(k)) errors += k + ": unknown field\n";
  }
  if (doc.contains("scim") && !doc["scim"].is_object() && !doc["scim"].is_null()) {
    errors += "scim: must be a mapping\n";
  }
  if (doc.contains("cache")) {
    const json& cache = doc["cache"];
    if (!cache.is_object() && !cache.is_null()) {
      errors += "cache: must be a mapping\n";
    } else if (cache.is_object() && cache.contains("cache_dir") &&
               !cache["cache_dir"].is_string()) {
      errors += "cache.cache_dir: must be a string\n";
    }
  }
  if (doc.contains("webhooks") && !doc["webhooks"].is_null()) {
    const json& hooks = doc["webhooks"];
    if (!hooks.is_object()) {
      errors += "webhooks: must be a mapping\n";
    } else {
      for (auto& [k, v] : hooks.items()) {
        if (k != "signing_key" && k != "base_url") {
          errors += "webhooks." + k + ": unknown field (signing_key, base_url)\n";
        } else if (!v.is_string() && !v.is_null()) {
          errors += "webhooks." + k + ": must be a string, got " + v.dump() + "\n";
        } else if (v.is_string() && k == "signing_key") {
          config->webhooks_signing_key = v.get<std::string>();
        } else if (v.is_string()) {
          config->webhooks_base_url = v.get<std::string>();
          while (!config->webhooks_base_url.empty() && config->webhooks_base_url.back() == '/') {
            config->webhooks_base_url.pop_back();
          }
        }
      }
    }
  }
  if (doc.contains("launch_error") && !doc["launch_error"].is_boolean()) {
    errors += "launch_error: must be true or false, got " + doc["launch_error"].dump() + "\n";
  }
  try {
    if (doc.contains("port")) config->port = doc["port"].get<int>();
    if (doc.contains("bind_address")) config->bind_address = doc["bind_address"].get<std::string>();
    if (doc.contains("data_dir")) config->data_dir = doc["data_dir"].get<std::string>();
    if (doc.contains("webui_dir")) config->webui_dir = doc["webui_dir"].get<std::string>();
    if (doc.contains("cluster_name")) config->cluster_name = doc["cluster_name"].get<std::string>();
    if (doc.contains("db")) {
      const json& db = doc["db"];
      if (db.contains("type")) config->store = db["type"].get<std::string>();
      if (db.contains("path")) config->db_path = db["path"].get<std::string>();
      if (db.contains("synchronous")) {
        config->db_synchronous = db["synchronous"].get<std::string>();
      }
      if (db.contains("metrics_synchronous")) {
        config->db_metrics_synchronous = db["metrics_synchronous"].get<std::string>();
      }
      Result<DbTarget> pg = PostgresTargetFromYaml(db);
      if (!pg.ok()) errors += pg.status().message() + "\n";
      if (pg.ok() && !pg->store.empty()) {
        config->store = pg->store;
        config->db_path = pg->conninfo;
      }
    }
    if (doc.contains("security") && doc["security"].contains("initial_user_password")) {
      config->initial_user_password = doc["security"]["initial_user_password"].get<std::string>();
    }
    if (doc.contains("security") && doc["security"].contains("token_lifetime")) {
      Result<int64_t> secs = ParseTokenLifetime(doc["security"]["token_lifetime"]);
      if (secs.ok())
        config->token_lifetime_seconds = *secs;
      else
        errors += secs.status().message() + "\n";
    }
    if (doc.contains("security")) errors += ApplySecurityTransport(doc["security"], config);
    if (doc.contains("checkpoint_storage")) config->checkpoint_storage = doc["checkpoint_storage"];
    if (doc.contains("checkpoint_storage_allowed_roots")) {
      const json& roots = doc["checkpoint_storage_allowed_roots"];
      bool ok = roots.is_array();
      for (const auto& r : ok ? roots : json::array()) {
        ok = ok && r.is_string() && !r.get<std::string>().empty() && r.get<std::string>()[0] == '/';
      }
      if (ok) {
        config->checkpoint_storage_allowed_roots = roots.get<std::vector<std::string>>();
      } else {
        errors += "checkpoint_storage_allowed_roots: must be a list of absolute directories (got " +
                  roots.dump() + ")\n";
      }
    }
    if (doc.contains("agent_timeout"))
      config->agent_timeout_seconds = doc["agent_timeout"].get<int64_t>();
    if (doc.contains("task_container_defaults")) {
      const json& t = doc["task_container_defaults"];
      config->task_container_defaults = t;
      if (t.contains("preemption_timeout")) {
        config->preemption_timeout_seconds = t["preemption_timeout"].get<int64_t>();
      }
    }
    if (doc.contains("resource_manager")) config->resource_manager = doc["resource_manager"];
    if (doc.contains("resource_pools")) config->resource_pools = doc["resource_pools"];
    if (doc.contains("scheduler") && !doc["scheduler"].is_null()) {
      if (!config->resource_manager.is_object()) config->resource_manager = json::object();
      if (!config->resource_manager.contains("scheduler")) {
        config->resource_manager["scheduler"] = doc["scheduler"];
      }
    }
    if (doc.contains("log") && doc["log"].contains("level")) {
      config->log_level = doc["log"]["level"].get<std::string>();
    }
  } catch (const json::exception& e) {
    errors += std::string("master config: wrong type: ") + e.what() + "\n";
  }
  if (!errors.empty()) {
    errors.pop_back();
    return InvalidArgument(errors);
  }
  return Status::Ok();
}

namespace {

// What a Slurm job's tasks run defaults to this installation (the job storage root must be on
// a file system every node sees when the cluster has more than this host).
void FillSlurmDefaults(const MasterConfig& config, const std::filesystem::path& data,
                       slurm::SlurmConfig* sc) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (sc->master_port == 0) sc->master_port = config.port;
  if (sc->job_storage_root.empty()) sc->job_storage_root = (data / "slurm-jobs").string();
  sc->job_storage_root = fs::absolute(sc->job_storage_root, ec).lexically_normal().string();
  if (sc->agent_path.empty()) {
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    sc->agent_path = ec ? "determined-agent" : (exe.parent_path() / "determined-agent").string();
  }
  if (sc->python.empty()) sc->python = config.python;
  if (sc->harness_path.empty()) sc->harness_path = config.harness_dir;
}

}  // namespace

Status FinalizeMasterConfig(MasterConfig* config) {
  namespace fs = std::filesystem;
  if (config->port < 0 || config->port > 65535) {
    return InvalidArgument("port: must be between 0 and 65535 (got " +
                           std::to_string(config->port) + ")");
  }
  if (config->store != "sqlite" && config->store != "postgres") {
    return InvalidArgument("db.type: must be 'sqlite' or 'postgres' (got '" + config->store + "')");
  }
  if (config->store == "postgres" && config->db_path.empty()) {
    return InvalidArgument(
        "db: PostgreSQL needs db.host/port/name/user/password or --db "
        "postgres://user:password@host:port/name");
  }
  for (const auto& [name, value] : {std::pair{"synchronous", &config->db_synchronous},
                                     std::pair{"metrics_synchronous",
                                               &config->db_metrics_synchronous}}) {
    if (*value != "full" && *value != "normal") {
      return InvalidArgument(std::string("db.") + name + ": must be 'full' or 'normal' (got '" +
                             *value + "')");
    }
  }
  std::error_code ec;
  fs::path data = fs::absolute(config->data_dir, ec);
  config->data_dir = data.lexically_normal().string();
  if (config->db_path.empty()) config->db_path = (data / "determined.db").string();
  if (config->python.empty()) config->python = DefaultPythonExecutable();
  if (config->harness_dir.empty()) config->harness_dir = HarnessDirNearExecutable();
  if (config->webui_dir.empty()) {
    config->webui_dir = WebUiDirNearExecutable();
  } else {
    config->webui_dir = fs::absolute(config->webui_dir, ec).lexically_normal().string();
  }
  json rm = config->resource_manager;
  json resource_pools = config->resource_pools;
  if (slurm::IsSlurm(rm)) {
    json rest, pools_rest;
    DET_ASSIGN_OR_RETURN(slurm::SlurmConfig sc,
                         slurm::ParseSlurmConfig(rm, resource_pools, &rest, &pools_rest));
    FillSlurmDefaults(*config, data, &sc);
    config->slurm = std::move(sc);
    rm = std::move(rest);
    resource_pools = std::move(pools_rest);
  } else if (rm.is_object()) {
    // Only the agent resource manager exists here; its `type` may be stated.
    std::string type = rm.value("type", std::string("agent"));
    if (type != "agent") {
      return InvalidArgument("resource_manager.type: must be 'agent' or 'slurm' (got '" + type +
                             "')");
    }
    rm.erase("type");
  }
  DET_ASSIGN_OR_RETURN(config->pools, scheduler::ParseResourcePools(rm, resource_pools));
  if (config->tls_cert.empty() != config->tls_key.empty()) {
    return InvalidArgument("security.tls: cert and key must be set together (cert: '" +
                           config->tls_cert + "', key: '" + config->tls_key + "')");
  }
  if (!config->agent_token_file.empty()) {
    if (!config->agent_token.empty()) {
      return InvalidArgument("security: set agent_token or agent_token_file, not both");
    }
    DET_ASSIGN_OR_RETURN(config->agent_token, ReadSecretFile(config->agent_token_file));
    if (config->agent_token.empty()) {
      return InvalidArgument("security.agent_token_file: '" + config->agent_token_file +
                             "' is empty");
    }
  }
  if (config->checkpoint_storage.is_null()) {
    config->checkpoint_storage = {{"type", "shared_fs"},
                                  {"host_path", (data / "checkpoints").string()},
                                  {"save_experiment_best", 0},
                                  {"save_trial_best", 1},
                                  {"save_trial_latest", 1}};
  }
  // The master's own storage is always allowed (experiments inherit it); it is the only root
  // unless the admin names more.
  std::vector<std::string> roots;
  std::string own = config::StorageBaseDir(config->checkpoint_storage);
  if (!own.empty()) roots.push_back(own);
  if (config->checkpoint_storage_allowed_roots) {
    roots.insert(roots.end(), config->checkpoint_storage_allowed_roots->begin(),
                 config->checkpoint_storage_allowed_roots->end());
  }
  std::vector<std::string> normalized;
  for (const std::string& r : roots) {
    std::string n = fs::path(r).lexically_normal().string();
    if (n.size() > 1 && n.back() == '/') n.pop_back();
    if (std::find(normalized.begin(), normalized.end(), n) == normalized.end()) {
      normalized.push_back(n);
    }
  }
  config->checkpoint_storage_allowed_roots = std::move(normalized);
  return Status::Ok();
}

nlohmann::json TaskContainerDefaultsFor(const nlohmann::json& master_tcd,
                                        const scheduler::ResourcePoolsConfig& pools,
                                        const std::string& pool) {
  const scheduler::PoolConfig* p = pools.Find(pool);
  return config::MergeTaskContainerDefaults(master_tcd,
                                            p ? p->task_container_defaults : nlohmann::json());
}

nlohmann::json TaskDefaultsToMask(const nlohmann::json& master_tcd,
                                  const scheduler::ResourcePoolsConfig& pools) {
  // Every entry of every list: a pool's variable of the same name does not unmask the master's.
  nlohmann::json vars = nlohmann::json::array();
  std::function<void(const nlohmann::json&)> add = [&](const nlohmann::json& ev) {
    if (ev.is_array()) {
      for (const auto& kv : ev) vars.push_back(kv);
    } else if (ev.is_object()) {
      for (const auto& [device, list] : ev.items()) add(list);
    }
  };
  if (master_tcd.is_object() && master_tcd.contains("environment_variables")) {
    add(master_tcd["environment_variables"]);
  }
  for (const scheduler::PoolConfig& p : pools.pools) {
    const nlohmann::json& tcd = p.task_container_defaults;
    if (tcd.is_object() && tcd.contains("environment_variables")) add(tcd["environment_variables"]);
  }
  return {{"environment_variables", vars}};
}

std::string TcdStartupHook(const nlohmann::json& tcd) {
  if (!tcd.is_object() || !tcd.contains("startup_hook") || !tcd["startup_hook"].is_string()) {
    return "";
  }
  return tcd["startup_hook"].get<std::string>();
}

}  // namespace det::master::server
