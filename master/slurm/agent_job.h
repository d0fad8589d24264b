#pragma once
// The `slurm` provider's jobs (pools that grow, master/server/slurm_provider.h), as pure
// functions: the sbatch command line that runs one long-lived determined-agent as one Slurm job,
// and the reading of squeue's answer back into the agents that exist. No I/O here.
//
// A job is named after its agent (--job-name=<agent id>) and carries in its comment what a
// restarted master needs to re-find it without files of its own: a marker, the master it
// belongs to (two masters may share a Slurm cluster and reuse agent ids), the launch time and
// the pool: "det-agent|<master url>|<launched ms>|<pool>".

#include <cstdint>
#include <string>
#include <vector>

namespace det::master::slurm {

struct AgentJobRequest {
  std::string agent_id;
  std::string pool;
  int slots = 1;
  std::string slot_type = "cpu";  // cpu: --cpus-per-task=slots; cuda: --gpus-per-node=slots
  std::string partition;          // "": Slurm's default
  int64_t launched_at_ms = 0;
  std::string agent_path;
  std::string master_url;
  std::string data_dir;          // the agent's --data-dir (job_storage_root/<agent id>)
  std::string output;            // the job's stdout/stderr file
  std::string agent_token_file;  // "": none
  std::string master_cert_file;  // "": none
};

// `sbatch` arguments, the wrapped agent command line included (--wrap).
std::vector<std::string> AgentSbatchArgs(const AgentJobRequest& request);

// The comment that marks a job as an agent of the master at `master_url`.
std::string AgentJobComment(const std::string& master_url, int64_t launched_at_ms,
                            const std::string& pool);

// One agent job as squeue lists it.
struct AgentJob {
  std::string job_id;
  std::string agent_id;  // the job name
  std::string state;     // PENDING, RUNNING, COMPLETING, ...
  std::string pool;
  int64_t launched_at_ms = 0;
};

// The squeue output format ParseAgentJobs reads (the comment last: it may hold '|').
inline constexpr char kAgentSqueueFormat[] = "%i|%T|%j|%k";

// The jobs of `squeue -h -o kAgentSqueueFormat` that are agents of the master at `master_url`;
// other jobs (trials, other masters' agents, anything else) are left out.
std::vector<AgentJob> ParseAgentJobs(const std::string& text, const std::string& master_url);

}  // namespace det::master::slurm
