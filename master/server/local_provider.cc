#include "master/server/local_provider.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/spawn_detached.h"

namespace det::master::server {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

LocalProvider::LocalProvider(Options options, const Clock* clock)
    : options_(std::move(options)), clock_(clock) {}

std::string LocalProvider::AgentBinaryNearExecutable() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  fs::path agent = self.parent_path() / "determined-agent";
  return access(agent.c_str(), X_OK) == 0 ? agent.string() : "";
}

bool LocalProvider::IsOurAgent(pid_t pid, const std::string& agent_id) const {
  if (pid <= 1 || (kill(pid, 0) != 0 && errno != EPERM)) return false;
  std::string stat = ReadAll("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  if (paren != std::string::npos && paren + 2 < stat.size()) {
    char state = stat[paren + 2];
    if (state == 'Z' || state == 'X') return false;
  }
  std::string cmdline = ReadAll("/proc/" + std::to_string(pid) + "/cmdline");
  // Empty while the process is inside execve, and still ours (the master's) between the fork
  // and the exec: either way it is the one we started.
  if (cmdline.empty() || cmdline == ReadAll("/proc/self/cmdline")) return true;
  std::string want = std::string("--agent-id") + '\0' + agent_id + '\0';
  return cmdline.find(want) != std::string::npos &&
         cmdline.find(options_.root) != std::string::npos;
}

Status LocalProvider::Launch(const LaunchSpec& spec) {
  if (options_.agent_binary.empty()) {
    return FailedPrecondition("no determined-agent binary next to the master");
  }
  std::error_code ec;
  std::string data_dir = options_.root + "/" + spec.agent_id;
  fs::create_directories(data_dir, ec);
  if (ec) return Internal("cannot create " + data_dir + ": " + ec.message());
  std::vector<std::string> argv = {options_.agent_binary,
                                   "--master-url",
                                   options_.master_url,
                                   "--agent-id",
                                   spec.agent_id,
                                   "--resource-pool",
                                   spec.pool,
                                   "--slots",
                                   std::to_string(spec.slots),
                                   "--data-dir",
                                   data_dir};
  if (!options_.agent_token_file.empty()) {
    argv.insert(argv.end(), {"--agent-token-file", options_.agent_token_file});
  }
  if (!options_.master_cert_file.empty()) {
    argv.insert(argv.end(), {"--master-cert-file", options_.master_cert_file});
  }
  DET_ASSIGN_OR_RETURN(pid_t pid,
                       SpawnDetached(argv, options_.root + "/" + spec.agent_id + ".log"));
  json record = {{"agentId", spec.agent_id},
                 {"pool", spec.pool},
                 {"pid", pid},
                 {"slots", spec.slots},
                 {"launchedAtMs", spec.launched_at_ms}};
  // Written to a temporary name and renamed: a crash never leaves half a record.
  std::string path = options_.root + "/" + spec.agent_id + ".json";
  {
    std::ofstream out(path + ".tmp", std::ios::trunc);
    out << record.dump() << "\n";
    if (!out) {
      kill(-pid, SIGKILL);
      return Internal("cannot write " + path + ".tmp");
    }
  }
  fs::rename(path + ".tmp", path, ec);
  if (ec) {
    kill(-pid, SIGKILL);
    return Internal("cannot write " + path + ": " + ec.message());
  }
  kill_at_ms_.erase(spec.agent_id);
  return Status::Ok();
}

Status LocalProvider::Stop(const std::string& agent_id) {
  json record = json::parse(ReadAll(options_.root + "/" + agent_id + ".json"), nullptr, false);
  if (!record.is_object() || !record.contains("pid") || !record["pid"].is_number_integer()) {
    return NotFound("no record of agent " + agent_id + " in " + options_.root);
  }
  pid_t pid = record["pid"].get<pid_t>();
  if (IsOurAgent(pid, agent_id)) {
    // The agent leads its own process group (setsid); its trials have their own groups and
    // the agent ends them on SIGTERM.
    if (kill(-pid, SIGTERM) != 0) kill(pid, SIGTERM);
  }
  if (!kill_at_ms_.count(agent_id)) kill_at_ms_[agent_id] = NowMs() + options_.grace_ms;
  return Status::Ok();
}

Result<std::vector<Provider::Instance>> LocalProvider::List() {
  std::vector<Instance> out;
  std::error_code ec;
  if (!fs::is_directory(options_.root, ec)) return out;
  for (fs::directory_iterator it(options_.root, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& path = it->path();
    if (path.extension() != ".json") continue;
    json record = json::parse(ReadAll(path.string()), nullptr, false);
    std::string id = path.stem().string();
    bool valid = record.is_object() && record.value("agentId", "") == id &&
                 record.contains("pid") && record["pid"].is_number_integer();
    pid_t pid = valid ? record["pid"].get<pid_t>() : 0;
    if (!valid || !IsOurAgent(pid, id)) {
      fs::remove(path, ec);  // gone (or not ours): forget it
      kill_at_ms_.erase(id);
      continue;
    }
    auto kill_at = kill_at_ms_.find(id);
    if (kill_at != kill_at_ms_.end() && NowMs() >= kill_at->second) {
      if (kill(-pid, SIGKILL) != 0) kill(pid, SIGKILL);
    }
    Instance inst;
    inst.agent_id = id;
    inst.pool = record.value("pool", "");
    inst.launched_at_ms = record.value("launchedAtMs", int64_t{0});
    out.push_back(std::move(inst));
  }
  return out;
}

}  // namespace det::master::server
