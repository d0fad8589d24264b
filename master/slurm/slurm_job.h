#pragma once
// The Slurm side of one allocation, as pure functions: the sbatch command line and batch script
// for an allocation, and the reading of squeue/sinfo output (state, pending reason, queue
// order). No I/O here; master/server/slurm_service.* runs the tools.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace det::master::slurm {

// What one node of a partition offers (from sinfo).
struct PartitionNodes {
  int64_t nodes = 0;
  int64_t cpus_per_node = 0;
  int64_t gpus_per_node = 0;
};

// One allocation as a Slurm job.
struct JobRequest {
  std::string allocation_id;
  std::string name;  // job name, e.g. "det-trial-5"
  std::string partition;
  std::string slot_type = "cpu";  // cpu | cuda | rocm
  int64_t slots = 1;              // slots_per_trial
  bool single_node = false;       // resources.is_single_node
  int priority = 42;              // Determined's (smaller runs first); becomes --nice
  std::string work_dir;           // this job's directory (script, output, agents' data)
  // The agent each node runs, and what it is told.
  std::string agent_path;
  std::string master_url;
  std::string resource_pool;
  std::string python;
  std::string harness_path;
  // The cluster's agent secret file (security.agent_token_file); empty: agents send none.
  std::string agent_token_file;
  // With a master serving HTTPS (security.tls): the PEM the agents verify it with (its cert
  // chain); empty: plain http, nothing passed.
  std::string master_cert_file;
};

// How a request is laid out over nodes.
struct JobShape {
  int64_t nodes = 1;
  int64_t slots_per_node = 1;  // CPUs per task (cpu) or GPUs per node (cuda/rocm)
  int64_t cpus_per_node = 1;   // --cpus-per-task
};

// Spreads `slots` over the fewest nodes of `partition` that hold them (equal slots per node).
// Errors name the request and what the partition offers.
Result<JobShape> ShapeJob(const JobRequest& request, const PartitionNodes& partition);

// Slurm's nice value for a Determined priority (1..99, smaller first): nice = priority, so the
// order of priorities is the order Slurm uses among otherwise equal jobs.
int NiceOf(int priority);

// The sbatch arguments (without the script path, which comes last).
std::vector<std::string> SbatchArgs(const JobRequest& request, const JobShape& shape);

// The batch script: srun starts one agent per node that serves this allocation only and exits
// after it; the agent id is slurm-<job id>-<node id>.
std::string BatchScript(const JobRequest& request, const JobShape& shape);

// The agent id the batch script gives the agent on node `node_id` of job `job_id`, and back.
std::string AgentIdFor(const std::string& job_id, int64_t node_id);
std::optional<std::pair<std::string, int64_t>> ParseAgentId(const std::string& agent_id);

enum class JobState {
  kPending,
  kRunning,
  kSuspended,
  kCompleting,
  kCompleted,
  kFailed,
  kCancelled,
  kTimeout,
  kNodeFail,
  kPreempted,
  kBootFail,
  kDeadline,
  kOutOfMemory,
  kUnknown,
};

JobState ParseJobState(const std::string& text);
// Ended (a final state; COMPLETING is not one).
bool IsFinal(JobState s);
// A final state that is Slurm's doing, not the trial's: the allocation ends as an
// infrastructure failure (rescheduled without counting as a restart).
bool IsInfrastructureEnd(JobState s);

// One line of `squeue -h -o kSqueueFormat`.
struct JobStatus {
  std::string job_id;
  JobState state = JobState::kUnknown;
  std::string state_text;
  std::string reason;  // pending reason (Resources, Priority, ...); "None" when there is none
  std::string partition;
  int64_t nodes = 0;
  int64_t priority = 0;  // Slurm's computed priority (bigger first)
  int64_t nice = 0;
  std::string name;
};

// The squeue output format the parser reads.
inline constexpr char kSqueueFormat[] = "%i|%T|%r|%P|%D|%Q|%y|%j";
// The sinfo format the partition parser reads (one line per node).
inline constexpr char kSinfoFormat[] = "%P|%N|%c|%G";

// Lines that do not parse are skipped (squeue prints nothing else with -h).
std::vector<JobStatus> ParseSqueue(const std::string& text);
// Per partition (the default partition's trailing '*' removed).
std::map<std::string, PartitionNodes> ParseSinfo(const std::string& text);

// A pending reason as `det job list` shows it ("" when not pending for a reason).
std::string DescribePendingReason(const std::string& reason);

// Pending jobs of `partition` that Slurm starts before `job_id` (bigger priority first, then
// lower job id): the job's position in Slurm's queue. nullopt when the job is not pending there.
std::optional<int64_t> JobsAhead(const std::vector<JobStatus>& jobs, const std::string& job_id);

}  // namespace det::master::slurm
