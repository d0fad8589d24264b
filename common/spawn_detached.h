#pragma once
// SpawnDetached: starts a daemon (the local cluster's master and agents, a provisioned agent,
// Slurm's daemons) that outlives its starter.

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace det {

// Starts argv[0] (a path) detached: double fork, a new session and process group, a clean
// signal mask, stdin from /dev/null, stdout and stderr appended to log_path. Returns its pid, or
// the exec error.
Result<pid_t> SpawnDetached(const std::vector<std::string>& argv, const std::string& log_path);

}  // namespace det
