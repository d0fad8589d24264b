#include "agent/orphan_cleanup.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "agent/allocation_records.h"
#include "agent/warm_python.h"

namespace det::agent {
namespace {

namespace fs = std::filesystem;

struct Target {
  AllocationRecord record;  // workdir filled in
  std::set<int> killed;
};

struct Match {
  int pid;
  int pgid;
  size_t target;  // kNoTarget: a previous run's warm python, or a fork of it with no record
};

constexpr size_t kNoTarget = static_cast<size_t>(-1);

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool AllDigits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// The target whose environment `pid` carries, if any; live (non-zombie) processes only. A
// process with the warm-python marker of `data_dir` is a previous run's zygote or a fork of it
// (forks keep the zygote's initial environment): it matches the record whose pid is its pid or
// its group, else kNoTarget.
std::optional<Match> Inspect(const std::string& proc_root, const std::string& data_dir, int pid,
                             const std::vector<Target>& targets) {
  std::string base = proc_root + "/" + std::to_string(pid);
  std::optional<ProcStat> stat = ParseProcStat(ReadWhole(base + "/stat"));
  if (!stat || stat->state == 'Z' || stat->state == 'X' || stat->state == 'x') return std::nullopt;
  std::string env_block = ReadWhole(base + "/environ");  // unreadable (another user): empty
  if (EnvironHas(env_block, kZygoteMarkerEnv, data_dir)) {
    for (size_t i = 0; i < targets.size(); ++i) {
      int recorded = targets[i].record.pid;
      if (recorded > 0 && (pid == recorded || stat->pgid == recorded)) {
        return Match{pid, stat->pgid, i};
      }
    }
    return Match{pid, stat->pgid, kNoTarget};
  }
  if (env_block.find("DET_CONTAINER_ID=") == std::string::npos) return std::nullopt;
  for (size_t i = 0; i < targets.size(); ++i) {
    const AllocationRecord& r = targets[i].record;
    if (EnvironHas(env_block, "DET_CONTAINER_ID", r.allocation_id) &&
        EnvironHas(env_block, "DET_WORKDIR", r.workdir)) {
      return Match{pid, stat->pgid, i};
    }
  }
  return std::nullopt;
}

std::vector<Match> Scan(const std::string& proc_root, const std::string& data_dir,
                        const std::vector<Target>& targets) {
  std::vector<Match> out;
  const int self = static_cast<int>(getpid());
  std::error_code ec;
  for (fs::directory_iterator it(proc_root, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!AllDigits(name) || name.size() > 9) continue;
    int pid = std::stoi(name);
    if (pid <= 1 || pid == self) continue;
    if (auto m = Inspect(proc_root, data_dir, pid, targets)) out.push_back(*m);
  }
  return out;
}

// SIGKILLs `m` (and the group it leads) after checking, through a pidfd that pins the process,
// that the pid still names the process we matched. Returns whether a signal was sent.
bool KillVerified(const std::string& proc_root, const std::string& data_dir, const Match& m,
                  const std::vector<Target>& targets) {
  int fd = static_cast<int>(syscall(SYS_pidfd_open, m.pid, 0));
  if (fd < 0 && errno != ENOSYS) return false;  // gone already
  std::optional<Match> again = Inspect(proc_root, data_dir, m.pid, targets);
  bool sent = false;
  if (again && again->target == m.target) {
    // A verified group leader: every member of its group descends from our process.
    if (again->pgid == m.pid && kill(-m.pid, SIGKILL) == 0) sent = true;
    if (fd >= 0) {
      sent = syscall(SYS_pidfd_send_signal, fd, SIGKILL, nullptr, 0) == 0 || sent;
    } else {
      sent = kill(m.pid, SIGKILL) == 0 || sent;
    }
  }
  if (fd >= 0) close(fd);
  return sent;
}

}  // namespace

std::optional<ProcStat> ParseProcStat(std::string_view text) {
  size_t close_paren = text.rfind(')');
  if (close_paren == std::string_view::npos) return std::nullopt;
  std::istringstream in(std::string(text.substr(close_paren + 1)));
  ProcStat stat;
  int ppid = 0;
  if (!(in >> stat.state >> ppid >> stat.pgid)) return std::nullopt;
  return stat;
}

bool EnvironHas(std::string_view env_block, std::string_view key, std::string_view value) {
  size_t start = 0;
  while (start < env_block.size()) {
    size_t end = env_block.find('\0', start);
    if (end == std::string_view::npos) end = env_block.size();
    std::string_view entry = env_block.substr(start, end - start);
    if (entry.size() == key.size() + 1 + value.size() && entry.substr(0, key.size()) == key &&
        entry[key.size()] == '=' && entry.substr(key.size() + 1) == value) {
      return true;
    }
    start = end + 1;
  }
  return false;
}

Result<std::vector<CleanedAllocation>> CleanUpStaleAllocations(const std::string& data_dir,
                                                               const CleanupOptions& options) {
  AllocationRecords records(data_dir);
  DET_ASSIGN_OR_RETURN(std::vector<AllocationRecord> stale, records.List());
  std::vector<Target> targets;
  for (AllocationRecord& r : stale) {
    if (r.workdir.empty()) r.workdir = AllocationWorkDir(data_dir, r.allocation_id);
    targets.push_back({std::move(r), {}});
  }

  // Processes may fork while we kill: repeat until a scan finds none of ours alive.
  auto deadline = std::chrono::steady_clock::now() + options.timeout;
  std::vector<Match> alive = Scan(options.proc_root, data_dir, targets);
  auto note_killed = [&](const Match& m) {
    if (m.target != kNoTarget) targets[m.target].killed.insert(m.pid);
  };
  while (!alive.empty() && std::chrono::steady_clock::now() < deadline) {
    // A stale warm python last: its forks die with it (PR_SET_PDEATHSIG), and would then be
    // gone before they were killed and counted as an allocation's.
    std::stable_partition(alive.begin(), alive.end(),
                          [](const Match& m) { return m.target != kNoTarget; });
    for (const Match& m : alive) {
      if (!KillVerified(options.proc_root, data_dir, m, targets)) continue;
      note_killed(m);
      for (const Match& member : alive) {
        if (member.pgid == m.pid) note_killed(member);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    alive = Scan(options.proc_root, data_dir, targets);
  }

  std::set<size_t> survivors;
  for (const Match& m : alive) survivors.insert(m.target);
  std::vector<CleanedAllocation> out;
  for (size_t i = 0; i < targets.size(); ++i) {
    const Target& t = targets[i];
    CleanedAllocation c;
    c.allocation_id = t.record.allocation_id;
    c.recorded_pid = t.record.pid;
    c.killed_pids.assign(t.killed.begin(), t.killed.end());
    c.gone = !survivors.count(i);
    if (c.gone) {
      std::error_code ec;
      fs::remove_all(AllocationWorkDir(data_dir, c.allocation_id), ec);
      DET_RETURN_IF_ERROR(records.Remove(c.allocation_id));
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace det::agent
