#pragma once
// ProvisionerService: pools that grow and shrink. For each pool whose config has a `provider`,
// the allocations service's tick hands it what waits and what each agent does (Tick, on the
// runtime loop); it runs the pure DecideScaling (scheduler/provisioner.h) and remembers the
// decision at once (agents launched count as starting, agents chosen to stop are marked stopping so
// the scheduler places nothing on them), while a worker thread of its own carries the decision out
// through a Provider (fork/exec, sbatch: never on the runtime loop).
//
// A Provider is the source of truth of which agents exist: after a master restart the service
// re-finds them through List(). The interface (what a new provider implements):
//   Launch(spec)  start one agent that registers as spec.agent_id in spec.pool with spec.slots
//                 slots; returns once it is started (not registered).
//   Stop(id)      ask it to end (graceful first); it stays in List() until it is gone.
//   List()        the agents of this provider that exist now (starting, running or stopping),
//                 with the pool and launch time each was given. Called after every batch of
//                 actions and about once a second; it is also where a provider escalates
//                 (SIGKILL after the grace period) and forgets what is gone.
// Providers: `local` (local_provider.h: agent processes on this host) and `slurm`
// (slurm_provider.h: one Slurm job per agent; sbatch, scancel --signal=TERM then scancel,
// squeue).
//
// Called from the runtime loop (the allocations service's tick); the worker thread takes only
// this service's mutex and calls the providers without it.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "master/scheduler/provisioner.h"

namespace det::master::server {

class Provider {
 public:
  struct LaunchSpec {
    std::string agent_id;
    std::string pool;
    int slots = 1;
    int64_t launched_at_ms = 0;
  };
  struct Instance {
    std::string agent_id;
    std::string pool;
    int64_t launched_at_ms = 0;
  };
  virtual ~Provider() = default;
  virtual Status Launch(const LaunchSpec& spec) = 0;
  virtual Status Stop(const std::string& agent_id) = 0;
  virtual Result<std::vector<Instance>> List() = 0;
};

class ProvisionerService {
 public:
  // One pool's demand, as the Master sees it at a tick.
  struct PoolDemand {
    int waiting_slots = 0;  // slots asked for by allocations waiting in the pool
    int waiting_tasks = 0;  // allocations waiting (zero-slot ones included)
    int free_slots = 0;     // unused slots on the pool's connected, schedulable agents
  };
  // One registered agent, as the Master sees it.
  struct AgentUsage {
    bool connected = false;
    bool busy = false;  // holds a live allocation
  };
  struct TickInput {
    std::map<std::string, PoolDemand> pools;   // by pool name
    std::map<std::string, AgentUsage> agents;  // by agent id (every agent the master knows)
  };
  // What one pool's provisioner looks like now (the job queue and resource-pool views).
  struct PoolStatus {
    int starting = 0;  // launched, not yet registered
    int running = 0;   // registered
    int stopping = 0;
  };

  // `pools`: every pool with a provider, by name; `providers`: by provider type ("local").
  // Pools whose type has no provider here are left static (a warning at Start).
  ProvisionerService(const Clock* clock, std::map<std::string, scheduler::ProvisionerConfig> pools,
                     std::map<std::string, std::unique_ptr<Provider>> providers);
  ~ProvisionerService();

  // Re-finds the providers' agents (a master restart) and starts the worker thread.
  Status Start() EXCLUDES(mu_);
  void Stop() EXCLUDES(mu_);

  // Decides for every provisioned pool and queues what the worker must do. Returns the agents
  // that the providers confirmed gone since the last tick: the Master fails what they still
  // held and forgets them.
  std::vector<std::string> Tick(const TickInput& input) EXCLUDES(mu_);
  // Runs the queued actions and refreshes the providers' lists once, on the calling thread
  // (the worker's body; tests call it instead of Start).
  void RunActions() EXCLUDES(mu_);

  // Whether the pool has a provider that this service runs.
  bool Provisions(const std::string& pool) const;
  // True for an agent this service is stopping: the scheduler places nothing new on it.
  bool Stopping(const std::string& agent_id) const EXCLUDES(mu_);
  PoolStatus StatusOf(const std::string& pool) const EXCLUDES(mu_);
  const std::map<std::string, scheduler::ProvisionerConfig>& pools() const { return pools_; }

 private:
  struct Agent {
    std::string pool;
    int64_t launched_at_ms = 0;  // for a re-found agent: when this master first saw it
    bool launched = false;       // the provider's Launch returned (else queued)
    bool registered = false;     // seen connected to the master at least once
    bool stopping = false;
    std::optional<int64_t> idle_since_ms;
  };
  struct Action {
    bool launch = true;
    std::string type;  // provider type
    Provider::LaunchSpec spec;
  };
  int64_t NowMs() const { return clock_->NowMicros() / 1000; }
  std::string NextAgentIdLocked(const std::string& pool) REQUIRES(mu_);
  void WorkerLoop() EXCLUDES(mu_);

  const Clock* clock_;
  const std::map<std::string, scheduler::ProvisionerConfig> pools_;
  std::map<std::string, std::unique_ptr<Provider>> providers_;  // by type; used by one thread

  mutable Mutex mu_;
  std::condition_variable_any cv_;
  std::map<std::string, Agent> agents_ GUARDED_BY(mu_);  // by agent id
  std::deque<Action> actions_ GUARDED_BY(mu_);
  std::vector<std::string> gone_ GUARDED_BY(mu_);
  std::map<std::string, int64_t> launch_backoff_until_ms_ GUARDED_BY(mu_);  // by pool
  std::map<std::string, int> next_index_ GUARDED_BY(mu_);                   // by pool
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread worker_;
};

struct MasterConfig;
// The service for the master config's pools with a provider (local: agents of this host, data
// under <data_dir>/provisioner; slurm: agents as Slurm jobs, data under
// <data_dir>/provisioner-slurm unless the pool says); null when no pool has one.
std::unique_ptr<ProvisionerService> MakeProvisioner(const MasterConfig& config, const Clock* clock);
// What `det job list` adds to a queued job of a provisioned pool: "waiting for N agent(s) to
// start" while agents start, else "".
std::string ProvisionerJobDetail(const ProvisionerService& service, const std::string& pool);

}  // namespace det::master::server
