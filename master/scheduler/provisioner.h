#pragma once
// Provisioner: how many agents a resource pool starts and which it stops, given the tasks that
// wait, the agents starting and the agents idle. Pure (clock passed in as `now_ms`); the master
// runs a provider (local: agent processes on this host; slurm: one Slurm job per agent) that
// does what the decision says.
//
// Config (a pool's `provider`, Determined's names): type (local | slurm | aws | gcp; only local
// and slurm have a provider here), min_instances and max_instances (min_agents and max_agents
// are accepted as other names), max_idle_agent_period and max_agent_starting_period
// (durations: "30s", "5m", "1h", "250ms" or a number of seconds), slots_per_agent (what a
// started agent offers; local and slurm only). Type slurm also takes partition, slot_type,
// slurm_conf, path, agent_path, job_storage_root and master_url (refused for other types).
//
// Rules of DecideScaling:
// 1. A starting agent that has not registered within max_agent_starting_period is stopped (and
//    no longer counts as starting).
// 2. Agents needed = ceil((slots the waiting tasks ask for - free slots on the pool's registered
//    agents) / slots_per_agent); 1 when only zero-slot tasks wait and no agent is registered;
//    starting agents count towards it; new ones are launched up to max_instances in all.
// 3. Below min_instances, agents are launched up to it.
// 4. An agent idle (no allocation) for max_idle_agent_period is stopped when no task waits,
//    oldest idle first, never below min_instances.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace det::master::scheduler {

struct ProvisionerConfig {
  std::string type;  // "local" | "slurm" | ...
  int min_instances = 0;
  int max_instances = 5;
  int64_t max_idle_agent_period_ms = 5 * 60 * 1000;
  int64_t max_agent_starting_period_ms = 20 * 60 * 1000;
  int slots_per_agent = 1;
  // type slurm only: each agent is one Slurm job (master/server/slurm_provider.h).
  struct Slurm {
    std::string partition;         // "": Slurm's default partition
    std::string slot_type = "cpu";  // cpu: slots are CPUs (--cpus-per-task); cuda: GPUs
    std::string slurm_conf;        // SLURM_CONF for sbatch/squeue/scancel ("": theirs)
    std::string path;              // prepended to PATH for the tools
    std::string agent_path;        // determined-agent on the nodes ("": next to the master)
    std::string job_storage_root;  // job output, agent data dirs ("": <data_dir>/provisioner-slurm)
    std::string master_url;        // what the agents connect to ("": the master's own address)
  } slurm;
};

// "30s" / "5m" / "1h" / "250ms" / "1h30m" / a number (seconds) -> milliseconds.
Result<int64_t> ParseDurationMs(const nlohmann::json& value, std::string_view where);

// Parses a pool's `provider`; `where` prefixes errors (e.g. "resource_pools[0].provider").
Result<ProvisionerConfig> ParseProvisionerConfig(const nlohmann::json& j, std::string_view where);

struct ProvisionedAgent {
  std::string id;
  bool registered = false;  // false: launched, not yet registered (starting)
  int64_t launched_at_ms = 0;
  std::optional<int64_t> idle_since_ms;  // set when registered and running nothing
};

struct ScalingInput {
  int64_t now_ms = 0;
  std::vector<ProvisionedAgent> agents;
  int waiting_slots = 0;  // slots asked for by tasks waiting in this pool
  int waiting_tasks = 0;  // tasks waiting in this pool (zero-slot ones included)
  int free_slots = 0;     // unused slots on the pool's registered agents (about to be used)
};

struct ScalingDecision {
  int launch = 0;
  std::vector<std::string> stop;  // agent ids
  bool operator==(const ScalingDecision&) const = default;
};

ScalingDecision DecideScaling(const ProvisionerConfig& config, const ScalingInput& input);

}  // namespace det::master::scheduler
