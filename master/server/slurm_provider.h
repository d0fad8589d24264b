#pragma once
// SlurmProvider: the `slurm` provider of pools that grow (provisioner_service.h). Each agent is
// one Slurm batch job running one long-lived determined-agent (not the single-allocation agent
// of the Slurm resource manager):
//   Launch  sbatch --job-name=<agent id> --nodes=1 --cpus-per-task=S [--partition=P]
//                  --comment=det-agent|<master url>|<launched ms>|<pool>
//                  --wrap "exec determined-agent --agent-id ID --resource-pool POOL --slots S ..."
//   Stop    scancel --full --signal=TERM (the agent ends its trials and exits; a pending job is
//           simply cancelled), then scancel after `grace_ms` if the job is still there
//   List    squeue -h -o %i|%T|%j|%k: the jobs whose comment names this master (pure parsing in
//           master/slurm/agent_job.h). Slurm holds all the state, so a restarted master
//           re-finds its agents there.
// Pool options (partition, slot type, tools, agent path, storage root, master URL) come from
// each pool's provider config. Calls run on the provisioner's worker thread only.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/subprocess.h"
#include "master/scheduler/provisioner.h"
#include "master/server/provisioner_service.h"
#include "master/slurm/agent_job.h"

namespace det::master::server {

class SlurmProvider : public Provider {
 public:
  // Runs one Slurm tool (argv[0] is sbatch, squeue or scancel) with the pool's PATH and
  // SLURM_CONF; returns its exit code and stdout+stderr.
  using Runner = std::function<Result<ProcessResult>(
      const scheduler::ProvisionerConfig::Slurm& pool, const std::vector<std::string>& argv)>;

  struct Options {
    // The master's own address and defaults for what a pool's config leaves empty.
    std::string master_url;
    std::string agent_binary;      // determined-agent next to the master
    std::string root;              // default job_storage_root
    std::string agent_token_file;  // the cluster's agent secret (empty: none sent)
    std::string master_cert_file;  // with an https master URL: the PEM to verify it with
    int64_t grace_ms = 10000;      // scancel --signal=TERM -> scancel
  };

  // `pools`: the config of every pool this provider serves, by pool name.
  SlurmProvider(Options options, std::map<std::string, scheduler::ProvisionerConfig::Slurm> pools,
                const Clock* clock, Runner runner);

  Status Launch(const LaunchSpec& spec) override;
  Status Stop(const std::string& agent_id) override;
  Result<std::vector<Instance>> List() override;

  // The default runner: the tools on PATH (the pool's `path` first), SLURM_CONF from its config.
  static Runner ToolRunner();

 private:
  // The pool's settings with the master's defaults filled in.
  scheduler::ProvisionerConfig::Slurm PoolConfig(const std::string& pool) const;
  // An agent job, and the pool whose tool settings (path, slurm_conf) found it.
  struct Job {
    slurm::AgentJob job;
    std::string tools_pool;
  };
  // The agent jobs of this master: one squeue per distinct tool setting of its pools (most
  // configs have one Slurm cluster).
  Result<std::vector<Job>> Jobs();
  Result<ProcessResult> Run(const std::string& pool, const std::vector<std::string>& argv);
  int64_t NowMs() const { return clock_->NowMicros() / 1000; }

  Options options_;
  const std::map<std::string, scheduler::ProvisionerConfig::Slurm> pools_;
  const Clock* clock_;
  Runner runner_;
  // Agents sent SIGTERM: when scancel is due.
  std::map<std::string, int64_t> kill_at_ms_;
};

}  // namespace det::master::server
