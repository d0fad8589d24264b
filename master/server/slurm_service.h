#pragma once
// SlurmService: the Slurm resource manager's link to Slurm. It submits each allocation of a
// Slurm-backed resource pool as one batch job (sbatch --parsable), persists the job id
// (store table slurm_jobs) so a restarted master re-adopts the job instead of submitting again,
// polls squeue for the state of its jobs, and cancels them (scancel).
//
// Why the command-line tools rather than slurmrestd: they exist on every Slurm login node
// with no extra daemon, no JWT key to provision and no REST version to track (slurmrestd's
// data_parser versions change between releases); parsable formats (--parsable, -h -o) make
// their output stable. One squeue call per poll covers every job of the master.
//
// Each job runs one determined-agent per node (master/slurm/slurm_job.h BatchScript) that
// registers as agent slurm-<job>-<node>, serves this allocation only and exits with it; the
// Master starts the allocation on those agents when every node has registered. So launch, the
// DET_* environment, rendezvous, log shipping, exit codes and re-adoption are the agent's.
//
// Threads: one worker runs the tools and calls the Listener without holding this service's
// mutex. Called from the runtime loop; the Listener posts its reports to the loop.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/subprocess.h"
#include "master/slurm/slurm_config.h"
#include "master/slurm/slurm_job.h"
#include "master/store/store.h"

namespace det::master::server {

class SlurmService {
 public:
  // Runs one Slurm tool; returns its exit code and its output (stdout and stderr together).
  using Runner = std::function<Result<ProcessResult>(const std::vector<std::string>& argv)>;

  // An allocation's non-zero exit held back until Slurm says whether it cancelled the job.
  struct DeferredExit {
    std::string allocation_id;
    std::string agent_id;
    int exit_code = 0;
    std::string error;
  };

  // Called on the worker thread, without this service's lock held.
  struct Listener {
    // The job of a live allocation ended, or Slurm no longer knows it (state kUnknown).
    std::function<void(const std::string& allocation_id, const slurm::JobStatus& status)> job_ended;
    // A deferred exit is decided: `infrastructure` when Slurm cancelled or lost the job.
    std::function<void(const DeferredExit& exit, bool infrastructure, const std::string& why)>
        exit_verdict;
    // sbatch refused the job (or could not run): the allocation cannot start.
    std::function<void(const std::string& allocation_id, const Status& error)> submit_failed;
  };

  // What `det job list` shows of one allocation's job.
  struct JobInfo {
    std::string job_id;
    int64_t nodes = 1;
    std::optional<slurm::JobStatus> status;  // from the latest squeue
    std::optional<int64_t> jobs_ahead;       // pending jobs Slurm starts first
  };

  SlurmService(slurm::SlurmConfig config, store::Store* store, const Clock* clock, Runner runner);
  ~SlurmService();
  SlurmService(const SlurmService&) = delete;
  SlurmService& operator=(const SlurmService&) = delete;

  // The default runner: the tools on PATH (config.path first), SLURM_CONF from the config.
  static Runner ToolRunner(const slurm::SlurmConfig& config);

  // Loads the open jobs from the store, then starts the worker.
  Status Start(Listener listener);
  void Stop();

  const slurm::SlurmConfig& config() const { return config_; }

  // True when the allocation has a job or a queued submission.
  bool Tracks(const std::string& allocation_id);
  // Queues the submission of `request` (its allocation must not be tracked yet).
  void Submit(slurm::JobRequest request);
  // The allocation has ended on the master's side: its job is cancelled when it is still
  // pending, or when it still runs after `grace_ms` (its agents exit by themselves first).
  void Forget(const std::string& allocation_id, int64_t grace_ms = 30000);
  // Holds `exit` until squeue tells whether the job was cancelled or lost.
  void DeferExit(DeferredExit exit);
  // Priority changed (det job update): the job's nice value follows while it is pending.
  void SetPriority(const std::string& allocation_id, int priority);
  // A job whose allocation the master does not know (e.g. a stray agent): scancel it.
  void CancelJob(const std::string& job_id);

  std::optional<JobInfo> Job(const std::string& allocation_id);
  // The allocation a job runs and its node count; nullopt when the job is not ours.
  std::optional<std::pair<std::string, int64_t>> AllocationOfJob(const std::string& job_id);

  // Runs one poll now (tests; the worker also polls every config.poll_interval_ms).
  void PollNow();

 private:
  struct Tracked {
    store::SlurmJobRow row;    // job_id empty while the submission is queued
    bool live = true;          // false after Forget
    int64_t cancel_after = 0;  // micros; 0: not scheduled
    bool cancel_sent = false;
    std::optional<slurm::JobStatus> status;
    int64_t missing_polls = 0;  // polls in a row that did not list the job
    std::optional<DeferredExit> deferred;
  };
  struct Op {
    enum Kind { kSubmit, kCancel, kNice } kind;
    slurm::JobRequest request;  // kSubmit
    std::string job_id;         // kCancel, kNice
    int nice = 0;
  };

  void Loop();
  void RunOp(const Op& op);
  void Poll();
  Result<ProcessResult> Run(const std::vector<std::string>& argv);
  Result<std::map<std::string, slurm::PartitionNodes>> Partitions();
  int64_t Now() const { return clock_->NowMicros(); }

  const slurm::SlurmConfig config_;
  store::Store* store_;
  const Clock* clock_;
  const Runner runner_;
  Listener listener_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool poll_requested_ = false;
  std::deque<Op> ops_;
  std::map<std::string, Tracked> jobs_;  // by allocation id
  std::vector<slurm::JobStatus> last_squeue_;
  std::thread worker_;
  std::mutex poll_mu_;  // one poll at a time (worker and PollNow)
};

}  // namespace det::master::server
