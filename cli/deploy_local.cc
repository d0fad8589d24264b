#include "cli/deploy_local.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/cli_context.h"
#include "cli/deploy_local_slurm.h"
#include "cli/password.h"
#include "cli/proc_state.h"
#include "cli/session.h"
#include "common/http_client.h"
#include "common/secret_file.h"
#include "common/spawn_detached.h"

namespace det::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kDbRule =
    "must be 'sqlite', 'postgres' or a postgres:// (or postgresql://) URL";

// An existing server's URL (the master parses the rest and names what is wrong).
bool IsPostgresUrl(const std::string& db) {
  return db.rfind("postgres://", 0) == 0 || db.rfind("postgresql://", 0) == 0;
}

CLI::Validator DbChoice() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (value == "sqlite" || value == "postgres" || IsPostgresUrl(value)) return "";
        return std::string(kDbRule) + ", not '" + value + "'";
      },
      "sqlite|postgres|URL");
}

bool Alive(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

// Alive and not exited (a zombie still answers kill(pid, 0)). The state comes from
// /proc/<pid>/stat, not from an empty /proc/<pid>/cmdline: that is also empty while a live
// process is inside execve, and a master checked in that window was reported dead.
bool Running(pid_t pid) {
  if (!Alive(pid)) return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return Alive(pid);  // no /proc: trust kill(pid, 0)
  std::optional<char> state = StateFromProcStat(line);
  return !state || !IsExitedState(*state);
}

std::string TailOfFile(const std::string& path, size_t max_bytes = 2000) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > max_bytes) s = s.substr(s.size() - max_bytes);
  return s;
}

Status WritePidFile(const std::string& path, pid_t pid) {
  std::ofstream out(path, std::ios::trunc);
  out << pid << "\n";
  if (!out) return Internal("cannot write " + path);
  return Status::Ok();
}

// Sends `sig` to the process group of `pid`, or to the process when it has no group of its own.
void SignalGroup(pid_t pid, int sig) {
  if (kill(-pid, sig) != 0) kill(pid, sig);
}

struct Stopped {
  std::string name;
  pid_t pid;
};

// Stops the process recorded in `pid_file`; returns true if one was running.
bool StopFromPidFile(const std::string& pid_file, const std::string& data_dir, pid_t* pid_out) {
  std::optional<pid_t> pid = ReadPidFile(pid_file);
  std::error_code ec;
  if (!pid || !ProcessMatches(*pid, data_dir)) {
    fs::remove(pid_file, ec);
    return false;
  }
  *pid_out = *pid;
  SignalGroup(*pid, SIGTERM);
  return true;
}

}  // namespace

std::string DefaultDataDir() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg != nullptr && xdg[0] != '\0') return std::string(xdg) + "/determined";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.local/share/determined";
}

Result<std::string> FindSiblingBinary(const std::string& name) {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path candidate = self.parent_path() / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  const char* path_env = std::getenv("PATH");
  std::stringstream ss(path_env != nullptr ? path_env : "");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    fs::path candidate = fs::path(dir) / name;
    if (access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate, ec)) {
      return candidate.string();
    }
  }
  return NotFound("cannot find " + name + " next to det or on PATH");
}

std::optional<pid_t> ReadPidFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  long long pid = 0;
  if (!(in >> pid) || pid <= 1) return std::nullopt;
  return static_cast<pid_t>(pid);
}

bool ProcessMatches(pid_t pid, const std::string& needle) {
  if (!Running(pid)) return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  if (!in) return true;  // no /proc: trust the pid file
  std::stringstream ss;
  ss << in.rdbuf();
  std::string cmdline = ss.str();
  // Empty while the process is inside execve (it is not a zombie: Running checked that); the
  // pid file was written for this process, so trust it rather than call it gone.
  if (cmdline.empty()) return true;
  for (char& c : cmdline) {
    if (c == '\0') c = ' ';
  }
  return cmdline.find(needle) != std::string::npos;
}


namespace {

std::string NormalizedDir(const std::string& data_dir) {
  std::error_code ec;
  std::string dir =
      fs::absolute(data_dir.empty() ? DefaultDataDir() : data_dir, ec).lexically_normal().string();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

// Agent names with a pid file in `dir`, sorted.
std::vector<std::string> AgentNames(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> names;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.size() > 4 && name.rfind("agent-", 0) == 0 && name.substr(name.size() - 4) == ".pid") {
      names.push_back(name.substr(0, name.size() - 4));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Stops the named processes of the cluster in `dir` (in order): SIGTERM, SIGKILL after 10 s.
Status StopProcesses(const std::string& dir, const std::vector<std::string>& names,
                     const std::string& what) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    Print("No local cluster found in " + dir + "\n");
    return Status::Ok();
  }
  std::vector<std::pair<std::string, std::string>> files;  // name, pid file
  for (const std::string& n : names) files.emplace_back(n, dir + "/" + n + ".pid");

  std::vector<Stopped> stopping;
  for (const auto& [name, pid_file] : files) {
    pid_t pid = 0;
    if (StopFromPidFile(pid_file, dir, &pid)) stopping.push_back({name, pid});
  }
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < deadline) {
    bool any = false;
    for (const Stopped& s : stopping) any = any || ProcessMatches(s.pid, dir);
    if (!any) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (const Stopped& s : stopping) {
    if (ProcessMatches(s.pid, dir)) {
      SignalGroup(s.pid, SIGKILL);
      Print("Killed " + s.name + " (pid " + std::to_string(s.pid) + ") after 10 s\n");
    } else {
      Print("Stopped " + s.name + " (pid " + std::to_string(s.pid) + ")\n");
    }
  }
  for (const auto& [name, pid_file] : files) fs::remove(pid_file, ec);
  if (stopping.empty()) Print("No " + what + " running in " + dir + "\n");
  return Status::Ok();
}

}  // namespace

// Runs det-postgres (installed next to det) with `args`; its last line of output on success.
static Result<std::string> RunDetPostgres(const std::string& command, const std::string& dir) {
  DET_ASSIGN_OR_RETURN(std::string script, FindSiblingBinary("det-postgres"));
  auto quote = [](const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  };
  std::string cmd = quote(script) + " " + command + " " + quote(dir) + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return Internal("cannot run " + script);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof(buf), p)) out += buf;
  int rc = pclose(p);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  if (rc != 0) return Unavailable("det-postgres " + command + " failed: " + out);
  size_t nl = out.rfind('\n');
  return nl == std::string::npos ? out : out.substr(nl + 1);
}

namespace {

// Agents a provisioned pool's `local` provider started (records <dir>/provisioner/<id>.json,
// docs/operations.md): stopped after the master, which would otherwise start them again.
void StopProvisionedAgents(const std::string& dir) {
  std::string root = dir + "/provisioner";
  std::error_code ec;
  std::vector<Stopped> stopping;
  std::vector<std::string> records;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".json") continue;
    records.push_back(it->path().string());
    std::ifstream in(it->path());
    nlohmann::json r = nlohmann::json::parse(in, nullptr, false);
    if (!r.is_object() || !r.contains("pid") || !r["pid"].is_number_integer()) continue;
    pid_t pid = r["pid"].get<pid_t>();
    if (!ProcessMatches(pid, root)) continue;
    SignalGroup(pid, SIGTERM);
    stopping.push_back({it->path().stem().string(), pid});
  }
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < deadline) {
    bool any = false;
    for (const Stopped& s : stopping) any = any || ProcessMatches(s.pid, root);
    if (!any) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (const Stopped& s : stopping) {
    if (ProcessMatches(s.pid, root)) {
      SignalGroup(s.pid, SIGKILL);
      Print("Killed " + s.name + " (pid " + std::to_string(s.pid) + ") after 10 s\n");
    } else {
      Print("Stopped " + s.name + " (pid " + std::to_string(s.pid) + ")\n");
    }
  }
  for (const std::string& r : records) fs::remove(r, ec);
}

}  // namespace

Status ClusterDown(const std::string& data_dir) {
  std::string dir = NormalizedDir(data_dir);
  std::vector<std::string> names = AgentNames(dir);  // agents first, then the master
  names.push_back("master");
  DET_RETURN_IF_ERROR(StopProcesses(dir, names, "local cluster"));
  std::error_code ec;
  if (fs::exists(dir + "/slurmctld.pid", ec)) {
    LocalSlurmCancelJobs(dir);  // their agents and trials end before the daemons
    DET_RETURN_IF_ERROR(StopProcesses(dir, LocalSlurmDaemons(), "local Slurm"));
  }
  if (fs::exists(dir + "/postgres/data/postmaster.pid", ec)) {
    DET_RETURN_IF_ERROR(RunDetPostgres("stop", dir).status());
    Print("Stopped PostgreSQL (" + dir + "/postgres)\n");
  }
  StopProvisionedAgents(dir);
  return Status::Ok();
}

Status MasterDown(const std::string& data_dir) {
  return StopProcesses(NormalizedDir(data_dir), {"master"}, "master");
}

Status AgentDown(const std::string& data_dir, const std::string& agent_id) {
  std::string dir = NormalizedDir(data_dir);
  std::vector<std::string> names =
      agent_id.empty() ? AgentNames(dir) : std::vector<std::string>{agent_id};
  return StopProcesses(dir, names, agent_id.empty() ? "agent" : agent_id);
}

std::string LocalMasterUrl(const ClusterUpOptions& options) {
  return std::string(options.tls_cert.empty() ? "http" : "https") +
         "://127.0.0.1:" + std::to_string(options.master_port);
}

Result<std::string> LocalAgentTokenFile(const std::string& data_dir) {
  std::string path = NormalizedDir(data_dir) + "/agent_token";
  DET_RETURN_IF_ERROR(ReadOrCreateSecretFile(path).status());
  return path;
}

namespace {

// The CA file clients of a local HTTPS master trust: DET_MASTER_CERT_FILE (or --cert-file),
// else the master's own certificate (self-signed).
std::string LocalMasterCa(const ClusterUpOptions& options) {
  TlsClientOptions tls = HttpClient::DefaultTls();
  if (tls.noverify) return "noverify";
  if (!tls.ca_file.empty()) return fs::absolute(tls.ca_file).string();
  return options.tls_cert.empty() ? "" : fs::absolute(options.tls_cert).string();
}

// An HttpClient for the local master that verifies it as the agents will.
std::unique_ptr<HttpClient> LocalMasterClient(const ClusterUpOptions& options) {
  auto http = std::make_unique<HttpClient>(LocalMasterUrl(options));
  TlsClientOptions tls = HttpClient::DefaultTls();
  std::string ca = LocalMasterCa(options);
  if (ca == "noverify") {
    tls.noverify = true;
  } else {
    tls.ca_file = ca;
  }
  http->SetTls(tls);
  return http;
}

}  // namespace

namespace {

// "postgres" when the data dir recorded its store as the PostgreSQL det-postgres keeps under it
// (so it is started again), else "" (the master reads the record itself).
std::string RecordedLocalDb(const std::string& dir) {
  std::ifstream in(dir + "/store.json");
  if (!in) return "";
  nlohmann::json r = nlohmann::json::parse(in, nullptr, false);
  std::error_code ec;
  if (r.is_object() && r.value("store", "") == "postgres" &&
      fs::exists(dir + "/postgres/data/PG_VERSION", ec)) {
    return "postgres";
  }
  return "";
}

}  // namespace

Status MasterUp(const ClusterUpOptions& options) {
  std::error_code ec;
  std::string dir = NormalizedDir(options.data_dir);
  fs::create_directories(dir, ec);
  if (ec) return Internal("cannot create the data directory " + dir + ": " + ec.message());
  std::optional<pid_t> running = ReadPidFile(dir + "/master.pid");
  if (running && ProcessMatches(*running, dir)) {
    return FailedPrecondition("a master is already running for " + dir + " (pid " +
                              std::to_string(*running) + "); run master-down first");
  }
  DET_ASSIGN_OR_RETURN(std::string master_bin, FindSiblingBinary("determined-master"));
  std::vector<std::string> master_argv = {master_bin, "--port", std::to_string(options.master_port),
                                          "--data-dir", dir};
  std::string db = options.db.empty() ? RecordedLocalDb(dir) : options.db;
  if (db.empty()) {
    // No --db: the master reuses the store its data dir recorded (sqlite on a first start).
  } else if (db == "sqlite") {
    master_argv.insert(master_argv.end(), {"--store", "sqlite"});
  } else if (db == "postgres") {
    DET_ASSIGN_OR_RETURN(std::string url, RunDetPostgres("start", dir));
    Print("PostgreSQL is up (" + dir + "/postgres, log " + dir + "/postgres/postgres.log)\n");
    master_argv.push_back("--db");
    master_argv.push_back(url);
  } else if (IsPostgresUrl(db)) {
    // A server someone else runs (and stops): the master gets the URL as given.
    master_argv.push_back("--db");
    master_argv.push_back(db);
  } else {
    return InvalidArgument(std::string("--db: ") + kDbRule + " (got '" + db + "')");
  }
  if (!options.master_config_path.empty()) {
    std::string cfg = fs::absolute(options.master_config_path, ec).string();
    if (!fs::is_regular_file(cfg, ec)) {
      return InvalidArgument("--master-config-path: " + options.master_config_path +
                             " does not exist");
    }
    master_argv.push_back("--config-file");
    master_argv.push_back(cfg);
  }
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return InvalidArgument("--tls-cert and --tls-key go together");
  }
  if (!options.tls_cert.empty()) {
    for (const std::string* f : {&options.tls_cert, &options.tls_key}) {
      if (!fs::is_regular_file(*f, ec)) return InvalidArgument("TLS file " + *f + " does not exist");
    }
    master_argv.insert(master_argv.end(),
                       {"--tls-cert", fs::absolute(options.tls_cert).string(), "--tls-key",
                        fs::absolute(options.tls_key).string()});
  }
  DET_ASSIGN_OR_RETURN(std::string token_file, LocalAgentTokenFile(dir));
  master_argv.insert(master_argv.end(), {"--agent-token-file", token_file});
  std::string master_log = dir + "/master.log";
  DET_ASSIGN_OR_RETURN(pid_t master_pid, SpawnDetached(master_argv, master_log));
  DET_RETURN_IF_ERROR(WritePidFile(dir + "/master.pid", master_pid));
  std::string url = LocalMasterUrl(options);
  Print("Starting master (pid " + std::to_string(master_pid) + ", data dir " + dir + ", log " +
        master_log + ")\n");
  Print("Waiting for master at " + url + " to answer...\n");

  std::unique_ptr<HttpClient> client = LocalMasterClient(options);
  HttpClient& http = *client;
  auto deadline = Clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(options.master_timeout_s * 1000));
  while (true) {
    Result<HttpResponse> resp = http.Request("GET", "/info", "", 2);
    if (resp.ok() && resp->status == 200) break;
    // A certificate this client cannot verify will not become valid by waiting.
    if (resp.status().code() == StatusCode::kFailedPrecondition) return resp.status();
    if (!Running(master_pid)) {
      return Internal("the master exited during startup; the end of " + master_log + ":\n" +
                      TailOfFile(master_log));
    }
    if (Clock::now() > deadline) {
      return Unavailable("the master did not answer GET " + url + "/info within " +
                         std::to_string(static_cast<int>(options.master_timeout_s)) + " s; see " +
                         master_log);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  Print("Master is up at " + url + "\n");
  return Status::Ok();
}

Status AgentsUp(const ClusterUpOptions& options) {
  std::error_code ec;
  std::string dir = NormalizedDir(options.data_dir);
  fs::create_directories(dir, ec);
  DET_ASSIGN_OR_RETURN(std::string agent_bin, FindSiblingBinary("determined-agent"));
  std::string url = LocalMasterUrl(options);
  std::unique_ptr<HttpClient> client = LocalMasterClient(options);
  HttpClient& http = *client;
  DET_ASSIGN_OR_RETURN(std::string token_file, LocalAgentTokenFile(dir));
  std::string ca = LocalMasterCa(options);
  std::vector<std::pair<std::string, pid_t>> started;
  int wanted = 0;  // agents that must be connected at the end, including ones already running
  for (int i = 1; wanted < options.agents; ++i) {
    std::string id = "agent-" + std::to_string(i);
    std::optional<pid_t> existing = ReadPidFile(dir + "/" + id + ".pid");
    if (existing && ProcessMatches(*existing, dir)) {
      ++wanted;
      continue;
    }
    std::string agent_dir = dir + "/" + id;
    fs::create_directories(agent_dir, ec);
    std::vector<std::string> argv = {agent_bin,
                                     "--master-url",
                                     url,
                                     "--agent-id",
                                     id,
                                     "--slots",
                                     std::to_string(options.slots_per_agent),
                                     "--data-dir",
                                     agent_dir};
    if (!options.resource_pool.empty()) {
      argv.insert(argv.end(), {"--resource-pool", options.resource_pool});
    }
    argv.insert(argv.end(), {"--agent-token-file", token_file});
    if (!ca.empty()) argv.insert(argv.end(), {"--master-cert-file", ca});
    std::string log = dir + "/" + id + ".log";
    DET_ASSIGN_OR_RETURN(pid_t pid, SpawnDetached(argv, log));
    DET_RETURN_IF_ERROR(WritePidFile(dir + "/" + id + ".pid", pid));
    started.emplace_back(id, pid);
    ++wanted;
    Print("Starting " + id + " (pid " + std::to_string(pid) + ", " +
          std::to_string(options.slots_per_agent) + " slots, log " + log + ")\n");
  }
  if (wanted == 0) return Status::Ok();
  Print("Waiting for " + std::to_string(wanted) + " agent(s) to connect...\n");
  // Authenticate as `determined` (blank password), or $DET_USER/$DET_PASS when set.
  AuthEnv env = AuthEnv::FromEnvironment();
  std::string user = env.user.value_or("determined");
  nlohmann::json login = {{"username", user},
                          {"password", HashPasswordForLogin(env.password.value_or(""))},
                          {"isHashed", true}};
  std::optional<std::string> token = env.token;
  auto deadline = Clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(options.agents_timeout_s * 1000));
  int connected = 0;
  while (true) {
    if (!token) {
      Result<HttpResponse> resp = http.Request("POST", "/api/v1/auth/login", login.dump(), 5);
      if (resp.ok() && resp->status == 200) {
        nlohmann::json j = nlohmann::json::parse(resp->body, nullptr, false);
        if (j.is_object() && j.contains("token") && j["token"].is_string()) {
          token = j["token"].get<std::string>();
        }
      } else if (resp.ok() && resp->status == 401) {
        Print("Cannot log in as '" + user + "' to check the agents; not waiting for them\n");
        return Status::Ok();
      }
    }
    if (token) {
      http.SetHeader("Authorization", "Bearer " + *token);
      Result<HttpResponse> resp = http.Request("GET", "/api/v1/agents", "", 5);
      if (resp.ok() && resp->status == 200) {
        nlohmann::json j = nlohmann::json::parse(resp->body, nullptr, false);
        connected = 0;
        if (j.is_object() && j.contains("agents") && j["agents"].is_array()) {
          for (const auto& a : j["agents"]) {
            if (!a.is_object()) continue;
            std::string id = a.value("id", "");
            if (id.rfind("agent-", 0) != 0) continue;
            if (a.value("connected", true)) ++connected;
          }
        }
        if (connected >= wanted) break;
      } else if (resp.ok() && resp->status == 401) {
        token.reset();
      }
    }
    for (const auto& [id, pid] : started) {
      if (!Running(pid)) {
        std::string log = dir + "/" + id + ".log";
        return Internal(id + " exited during startup; the end of " + log + ":\n" + TailOfFile(log));
      }
    }
    if (Clock::now() > deadline) {
      return Unavailable(std::to_string(connected) + " of " + std::to_string(wanted) +
                         " agents connected within " +
                         std::to_string(static_cast<int>(options.agents_timeout_s)) +
                         " s; see the agent logs in " + dir);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Status::Ok();
}

Status ClusterUp(const ClusterUpOptions& options) {
  std::string dir = NormalizedDir(options.data_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Internal("cannot create the data directory " + dir + ": " + ec.message());
  DET_RETURN_IF_ERROR(ClusterDown(dir));
  if (options.resource_manager == "slurm") {
    if (!options.master_config_path.empty()) {
      return InvalidArgument(
          "--master-config-path: not with --resource-manager slurm, which writes the master "
          "config itself (" +
          dir + "/master-slurm.yaml)");
    }
    DET_ASSIGN_OR_RETURN(std::string slurm_conf, LocalSlurmUp(dir));
    ClusterUpOptions master = options;
    master.master_config_path = dir + "/master-slurm.yaml";
    {
      std::ofstream out(master.master_config_path, std::ios::trunc);
      out << LocalSlurmMasterConfig(slurm_conf, {"compute", "batch"});
      if (!out) return Internal("cannot write " + master.master_config_path);
    }
    DET_RETURN_IF_ERROR(MasterUp(master));
    Print("Cluster is up: master http://127.0.0.1:" + std::to_string(options.master_port) +
          " on the local Slurm (export SLURM_CONF=" + slurm_conf + " for its tools)\n");
    return Status::Ok();
  }
  if (options.resource_manager != "agent") {
    return InvalidArgument("--resource-manager: must be agent or slurm (got '" +
                           options.resource_manager + "')");
  }
  DET_RETURN_IF_ERROR(MasterUp(options));
  DET_RETURN_IF_ERROR(AgentsUp(options));
  Print("Cluster is up: master " + LocalMasterUrl(options) + ", " +
        std::to_string(options.agents) + (options.agents == 1 ? " agent" : " agents") + "\n");
  Print("Web UI: " + LocalMasterUrl(options) + "/det/\n");
  return Status::Ok();
}

void RegisterDeployCommands(CLI::App& app, CliContext& ctx) {
  CLI::App* deploy = app.add_subcommand("deploy", "deploy a cluster")->alias("d");
  deploy->require_subcommand(1);
  CLI::App* local = deploy->add_subcommand("local", "a cluster of local processes (no Docker)");
  local->require_subcommand(1);

  auto up = std::make_shared<ClusterUpOptions>();
  CLI::App* up_cmd = local->add_subcommand("cluster-up", "start a master and agents");
  up_cmd->add_option("--master-port", up->master_port, "master port (default 8080)")
      ->check(CLI::Range(1, 65535));
  up_cmd->add_option("--agents", up->agents, "number of agents (default 1)")
      ->check(NonNegativeInt());
  up_cmd->add_option("--slots-per-agent", up->slots_per_agent, "slots per agent (default 1)")
      ->check(PositiveInt());
  up_cmd->add_option("--data-dir", up->data_dir,
                     "state, logs and pid files (default $XDG_DATA_HOME/determined)");
  up_cmd->add_option("--master-config-path", up->master_config_path, "master config file");
  up_cmd
      ->add_option("--db", up->db,
                   "sqlite (embedded), postgres (a PostgreSQL under the data dir) or "
                   "postgres://user@host:port/name (an existing database); default: the store "
                   "the data dir recorded, else sqlite")
      ->check(DbChoice());
  up_cmd->add_option("--resource-pool", up->resource_pool,
                     "resource pool the agents join (default: the master's default pool)");
  up_cmd->add_option("--resource-manager", up->resource_manager,
                     "agent (default) | slurm: a local Slurm under the data dir runs the trials");
  up_cmd->add_option("--tls-cert", up->tls_cert, "serve HTTPS with this PEM certificate chain");
  up_cmd->add_option("--tls-key", up->tls_key, "the private key of --tls-cert");
  up_cmd->callback(
      [&ctx, up] { ctx.SetAction("start the local cluster", [up] { return ClusterUp(*up); }); });

  auto master_up = std::make_shared<ClusterUpOptions>();
  CLI::App* mu = local->add_subcommand("master-up", "start the master only");
  mu->add_option("--master-port", master_up->master_port, "master port (default 8080)")
      ->check(CLI::Range(1, 65535));
  mu->add_option("--data-dir", master_up->data_dir, "state, logs and pid files");
  mu->add_option("--master-config-path", master_up->master_config_path, "master config file");
  mu->add_option("--db", master_up->db,
                 "sqlite, postgres (under the data dir) or postgres://... (existing); default: "
                 "the store the data dir recorded, else sqlite")
      ->check(DbChoice());
  mu->add_option("--tls-cert", master_up->tls_cert, "serve HTTPS with this PEM certificate chain");
  mu->add_option("--tls-key", master_up->tls_key, "the private key of --tls-cert");
  mu->callback([&ctx, master_up] {
    ctx.SetAction("start the master", [master_up] { return MasterUp(*master_up); });
  });

  auto master_down_dir = std::make_shared<std::string>();
  CLI::App* md = local->add_subcommand("master-down", "stop the master only");
  md->add_option("--data-dir", *master_down_dir, "the master's data directory");
  md->callback([&ctx, master_down_dir] {
    ctx.SetAction("stop the master", [master_down_dir] { return MasterDown(*master_down_dir); });
  });

  auto agent_up = std::make_shared<ClusterUpOptions>();
  CLI::App* au = local->add_subcommand("agent-up", "start agents for a running master");
  au->add_option("--master-port", agent_up->master_port, "master port (default 8080)")
      ->check(CLI::Range(1, 65535));
  au->add_option("--agents", agent_up->agents, "agents that should run (default 1)")
      ->check(PositiveInt());
  au->add_option("--slots-per-agent", agent_up->slots_per_agent, "slots per agent (default 1)")
      ->check(PositiveInt());
  au->add_option("--data-dir", agent_up->data_dir, "state, logs and pid files");
  au->add_option("--resource-pool", agent_up->resource_pool,
                 "resource pool the new agents join (default: the master's default pool)");
  au->add_option("--tls-cert", agent_up->tls_cert,
                 "the master serves HTTPS with this certificate (trusted unless --cert-file)");
  au->callback([&ctx, agent_up] {
    ctx.SetAction("start the agents", [agent_up] { return AgentsUp(*agent_up); });
  });

  auto agent_down_dir = std::make_shared<std::string>();
  auto agent_down_id = std::make_shared<std::string>();
  CLI::App* ad = local->add_subcommand("agent-down", "stop agents (all, or --agent-id)");
  ad->add_option("--data-dir", *agent_down_dir, "the cluster's data directory");
  ad->add_option("--agent-id", *agent_down_id, "stop only this agent (e.g. agent-2)");
  auto all_flag = std::make_shared<bool>(false);
  ad->add_flag("--all", *all_flag, "stop every agent (the default without --agent-id)");
  ad->callback([&ctx, agent_down_dir, agent_down_id, all_flag] {
    ctx.SetAction("stop the agents", [agent_down_dir, agent_down_id] {
      return AgentDown(*agent_down_dir, *agent_down_id);
    });
  });

  auto down_dir = std::make_shared<std::string>();
  CLI::App* down_cmd = local->add_subcommand("cluster-down", "stop the master and agents");
  down_cmd->add_option("--data-dir", *down_dir, "the cluster-up data directory");
  down_cmd->callback([&ctx, down_dir] {
    ctx.SetAction("stop the local cluster", [down_dir] { return ClusterDown(*down_dir); });
  });
}

}  // namespace det::cli
