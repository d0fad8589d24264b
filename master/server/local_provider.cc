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

// Starts argv detached (new session; stdin /dev/null; stdout+stderr appended to log_path) and
// returns its pid. Double fork: the agent is not our child, so it leaves no zombie and outlives
// us. Only async-signal-safe calls between fork and exec.
Result<pid_t> SpawnDetached(const std::vector<std::string>& argv, const std::string& log_path) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + strerror(errno));
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t child = fork();
  if (child < 0) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return Internal(std::string("fork: ") + strerror(errno));
  }
  if (child == 0) {
    close(pipe_fds[0]);
    setsid();
    pid_t grandchild = fork();
    if (grandchild != 0) {
      int64_t pid64 = grandchild;
      ssize_t n = write(pipe_fds[1], &pid64, sizeof(pid64));
      (void)n;
      _exit(grandchild < 0 ? 1 : 0);
    }
    // The master blocks SIGTERM/SIGINT for its sigwait thread; the agent starts clean.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGHUP, SIG_IGN);
    int devnull = open("/dev/null", O_RDONLY);
    int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (devnull < 0 || log < 0) _exit(127);
    dup2(devnull, STDIN_FILENO);
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    for (int fd = 3; fd < 4096; ++fd) {
      if (fd != pipe_fds[1]) close(fd);
    }
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  int64_t pid64 = 0;
  size_t got = 0;
  while (got < sizeof(pid64)) {
    ssize_t n = read(pipe_fds[0], reinterpret_cast<char*>(&pid64) + got, sizeof(pid64) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(pipe_fds[0]);
  int wstatus = 0;
  while (waitpid(child, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (got < sizeof(pid64) || pid64 <= 0) return Internal("could not start " + argv[0]);
  return static_cast<pid_t>(pid64);
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
