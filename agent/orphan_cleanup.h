#pragma once
// Orphan cleanup: ends the processes that a previous run of this agent (same data dir) left
// behind when it was killed without a chance to stop them. Their output pipes died with that
// run, so they cannot be re-adopted; the master, not seeing them in the registration's
// `running` list, treats them as lost (an infrastructure failure, not a counted restart) and
// schedules the trial again from its latest checkpoint.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace det::agent {

struct CleanupOptions {
  std::string proc_root = "/proc";
  // How long to keep killing (processes may fork while being killed) before giving up.
  std::chrono::milliseconds timeout{5000};
};

struct CleanedAllocation {
  std::string allocation_id;
  int recorded_pid = 0;
  std::vector<int> killed_pids;  // sorted, each once
  // False when some process survived the timeout; the record is then kept for the next start.
  bool gone = true;
};

// For every record in <data_dir>/allocations: SIGKILLs each live process whose environment holds
// both DET_CONTAINER_ID=<allocation id> and DET_WORKDIR=<its work dir> (what the agent gives every
// process it starts), and the process group of each such process that leads one; then removes
// the record and <data_dir>/work/<allocation id>. A process without that environment is never
// signalled: a recorded pid alone may since have been reused by an unrelated process. Also
// SIGKILLs every process (and group it leads) whose environment holds
// DET_AGENT_ZYGOTE=<data_dir>: the previous run's warm python and the trials it forked, which
// keep its initial environment (warm_python.h); call this before starting a new warm python.
Result<std::vector<CleanedAllocation>> CleanUpStaleAllocations(const std::string& data_dir,
                                                               const CleanupOptions& options = {});

// The fields of /proc/<pid>/stat that cleanup needs.
struct ProcStat {
  char state = '?';
  int pgid = 0;
};
// Parses the text of /proc/<pid>/stat (whose command name may hold spaces and parentheses).
std::optional<ProcStat> ParseProcStat(std::string_view text);

// True when the NUL-separated `env_block` holds exactly the entry `key=value`.
bool EnvironHas(std::string_view env_block, std::string_view key, std::string_view value);

}  // namespace det::agent
