#pragma once
// AllocationService: allocations and the scheduling loop. It owns every trial's allocation
// (pending, assigned, running), the job of each experiment as the scheduler sees it, the
// scheduling pass (a snapshot of the cluster through the pure pool schedulers, then starts and
// releases), the reconciliation of allocations with what agents report, rendezvous, preemption,
// the job queue (`det job list/update`), the Slurm resource manager's jobs and the provisioner's
// view of demand. It decides on the runtime loop (runtime_loop.h): the pass runs once per batch
// of changes or per tick, never once per queued trial. What a trial is started with and what
// its allocation's end means for it are the experiments service's (AllocationOwner).
//
// Files: allocation_service.cc (requests, exits, preemption, rendezvous, listings),
// allocation_scheduling.cc (the pass and starts), allocation_agents.cc (registration, events,
// the tick), allocation_jobs.cc (the job queue), allocation_slurm.cc, allocation_provisioning.cc.

#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "master/scheduler/types.h"
#include "master/server/agent_service.h"
#include "master/server/auth_service.h"
#include "master/server/master_config.h"
#include "master/server/runtime_loop.h"
#include "master/server/runtime_records.h"
#include "master/server/runtime_view.h"
#include "master/server/trial_log_sink.h"
#include "master/server/waiters.h"
#include "master/store/decision_writes.h"
#include "master/store/store.h"

namespace det::master::server {

struct AgentView {
  std::string id;
  std::string resource_pool;
  std::string hostname;
  nlohmann::json slots;                         // [{id, type, brand, uuid}]
  std::map<int, std::string> slot_allocations;  // slot id -> allocation id
  std::map<int, std::string> slot_resources;    // slot id -> resources (container) id
  int64_t registered_time = 0;
  int64_t last_seen = 0;
  bool connected = false;
};

// One live allocation (`det task list`): a trial's run, pending or holding slots.
struct AllocationSummaryView {
  struct Resources {
    std::string resources_id;  // also the container id shown on the agent's slots
    std::string agent_id;
    std::vector<int> slot_ids;
    bool started = false;
  };
  std::string allocation_id;
  std::string task_id;
  std::string name;  // "Trial 5 (Experiment 3)"
  int64_t trial_id = 0;
  int64_t experiment_id = 0;
  std::string resource_pool;
  int64_t slots_needed = 0;
  int64_t registered_time = 0;  // micros, when it was queued
  std::optional<int64_t> priority;
  std::string state;  // STATE_PENDING | STATE_ASSIGNED | STATE_RUNNING
  std::vector<Resources> resources;
};

// One job of the queue (`det job list`): an active experiment.
struct JobView {
  std::string job_id;
  int64_t experiment_id = 0;
  std::string name;
  std::string username;
  int64_t submission_time = 0;
  int64_t priority = 42;
  double weight = 1;
  std::string resource_pool = "default";
  int64_t requested_slots = 0;
  int64_t allocated_slots = 0;
  bool scheduled = false;
  std::string state = "STATE_QUEUED";  // STATE_QUEUED | STATE_SCHEDULED | ..._BACKFILLED
  int64_t jobs_ahead = 0;              // -1 under fair share (Determined: unsupported)
  std::string position;                // the exact queue position, as stored
  // Slurm pools: the jobs' ids, states and pending reasons as Slurm reports them.
  std::string rm_detail;
  std::string type = "TYPE_EXPERIMENT";  // TYPE_COMMAND, TYPE_NOTEBOOK, ... for tasks
  std::string entity_id;                 // a task's id ("" for an experiment: its id)
  bool preemptible = true;
};

// What both deciding services share: the config, the store and the clock, the runtime loop they
// decide on, the long polls' waiters, the published view, the trials' master log lines and
// the allocation tokens.
struct RuntimeContext {
  const MasterConfig* config = nullptr;
  store::Store* store = nullptr;
  const Clock* clock = nullptr;
  RuntimeLoop* loop = nullptr;
  Waiters* waiters = nullptr;
  RuntimeView* view = nullptr;
  TrialLogSink* logs = nullptr;
  AuthService* auth = nullptr;
};

// Long-poll answers: called exactly once, possibly on another thread (the loop's), so they must
// only hand the result on (e.g. post an HTTP response), never call back in.
template <typename T>
using Reply = std::function<void(Result<T>)>;

// What a trial's process is started with, from the experiments service.
struct TrialLaunch {
  nlohmann::json entrypoint;
  nlohmann::json env = nlohmann::json::object();
  std::optional<nlohmann::json> container;
};

// The experiments service, as the allocations service needs it (on the loop).
class AllocationOwner {
 public:
  virtual ~AllocationOwner() = default;
  // The command line, environment and container of the trial's process on a `device` agent.
  virtual Result<TrialLaunch> LaunchOf(const AllocationRuntime& alloc,
                                       const std::string& device) ON_RUNTIME = 0;
  // The allocation ended: the trial's fate. `writes` holds the allocation's final row; the
  // owner applies it in one transaction with its own.
  virtual Status AllocationEnded(const AllocationRuntime& alloc, const AllocationEnd& end,
                                 store::DecisionWrites writes) ON_RUNTIME = 0;
  // `det job update` on an experiment's job: `resources` (priority, weight, resource_pool) to
  // patch into its config, and its new queue position when `position_set`.
  virtual Status UpdateJobOf(int64_t experiment_id, const nlohmann::json& resources,
                             bool position_set,
                             std::optional<scheduler::QueuePosition> position) ON_RUNTIME = 0;
};

class AllocationService {
 public:
  struct Deps : RuntimeContext {
    AgentService* agents = nullptr;
    class TaskService* tasks = nullptr;
    class AgentAdminService* agent_admin = nullptr;
    class ProvisionerService* provisioner = nullptr;  // null without a pool that grows
    class WorkspaceService* workspaces = nullptr;     // null: pool bindings not checked
  };

  explicit AllocationService(Deps deps);
  ~AllocationService();
  AllocationService(const AllocationService&) = delete;
  AllocationService& operator=(const AllocationService&) = delete;

  void SetOwner(AllocationOwner* owner) { owner_ = owner; }
  void SetClusterIds(std::string cluster_id, std::string master_id) {
    cluster_id_ = std::move(cluster_id);
    master_id_ = std::move(master_id);
  }
  // Creates the Slurm resource manager when the config asks for it (before the restore), and
  // starts its polling (after it: Slurm's reports name restored allocations).
  void CreateSlurm();
  Status StartSlurm();
  void Stop();

  // The pool of a job whose config names `pool` (the default when empty) for `slots` per trial.
  std::string ResolvePool(const std::string& pool, int64_t slots) const;
  // An error naming the pools when `pool` is set and not configured.
  Status CheckPoolExists(const std::string& pool) const;

  // --- Requests (HTTP routes); each answers from the loop. ---
  void RegisterAgent(const std::string& agent_id, nlohmann::json body,
                     Done<Result<nlohmann::json>> done);
  Result<nlohmann::json> RegisterAgent(const std::string& agent_id, const nlohmann::json& body);
  // The agent's commands after `after`; the agent service's lock only, never the loop.
  void PollCommands(const std::string& agent_id, int64_t after, int64_t timeout_ms,
                    Reply<nlohmann::json> reply);
  void HandleAgentEvents(const std::string& agent_id, nlohmann::json body, Done<Status> done);
  Status HandleAgentEvents(const std::string& agent_id, const nlohmann::json& body);
  std::vector<AgentView> ListAgents();
  // Every allocation that is not terminated.
  std::vector<AllocationSummaryView> ListAllocations();
  // The queue of each resource pool (or one), in queue order.
  std::vector<JobView> ListJobs(const std::string& pool = "");
  // One `det job update`: {priority} | {weight} | {resourcePool} | {aheadOf} | {behindOf}.
  void UpdateJob(const std::string& job_id, nlohmann::json update, Done<Status> done);
  Status UpdateJob(const std::string& job_id, const nlohmann::json& update);
  // True once the allocation should stop; false when `timeout_ms` passes first.
  void WaitPreemption(const std::string& allocation_id, int64_t timeout_ms, Reply<bool> reply);
  void AckPreemption(const std::string& allocation_id, Done<Status> done);
  Status AckPreemption(const std::string& allocation_id);
  // Once every process of the allocation runs (or at the timeout: Unavailable), tells this one
  // its rank and every node's address and slot count.
  void Rendezvous(const Principal& who, const std::string& allocation_id,
                  const std::string& resources_id, int64_t timeout_ms, Reply<nlohmann::json> reply);

  // --- For the experiments service, on the loop. ---
  void SetJob(JobSpec job) ON_RUNTIME;
  void RemoveJob(const std::string& job_id) ON_RUNTIME;
  // A new allocation for a trial's run `run_id`, queued at `queued_at` (not published yet; it
  // has no row until it is placed). Its id is AllocationIdOf(task_id, run_id).
  static std::string AllocationIdOf(const std::string& task_id, int64_t run_id);
  static std::unique_ptr<AllocationRuntime> NewAllocation(const std::string& job_id,
                                                          int64_t experiment_id, int64_t trial_id,
                                                          const std::string& task_id,
                                                          int64_t run_id, int64_t slots,
                                                          int64_t queued_at);
  store::AllocationRow RowOf(const AllocationRuntime& alloc) const ON_RUNTIME;
  // The usage records of the trial and task allocations that ran during [from, to] (micros),
  // at most `limit`, from the store (any thread).
  Result<std::vector<store::AllocationUsageRow>> Usage(int64_t from, int64_t to,
                                                       int64_t limit) const {
    return deps_.store->ListAllocationUsage(from, to, deps_.clock->NowMicros(), limit);
  }
  int64_t NowMicros() const { return deps_.clock->NowMicros(); }
  // Queues a new allocation for slots.
  void Publish(std::unique_ptr<AllocationRuntime> alloc) ON_RUNTIME;
  // Brings back an open allocation at start-up: its agent must report it by `adopt_deadline`.
  void Restore(const store::AllocationRow& row, const std::string& job_id, int64_t experiment_id,
               int64_t adopt_deadline) ON_RUNTIME;
  // Known: live, or ended and not yet dropped (the tick drops ended ones).
  bool Has(const std::string& allocation_id) const ON_RUNTIME;
  // Graceful: the process is asked to checkpoint and exit (killed after the job's preemption
  // timeout); else killed now. A pending allocation ends at once.
  void Terminate(const std::string& allocation_id, bool graceful) ON_RUNTIME;
  // Released by the master for other work (a pool change): graceful, and its trial is queued
  // again rather than charged a restart.
  void Release(const std::string& allocation_id) ON_RUNTIME;
  // Whether the allocation waits for slots and has no row (never placed): no process has its
  // token, so it can end with its trial's decision (DropUnplaced) rather than one of its own.
  bool IsUnplaced(const std::string& allocation_id) ON_RUNTIME;
  // Ends the allocations that IsUnplaced, all in one pass over the queue, without telling their
  // owner (the caller's decision holds their trials' new states); others are left alone. A
  // pause or kill of a search with 20,000 queued trials was 20,000 decisions, one per trial.
  void DropUnplaced(const std::vector<std::string>& allocation_ids) ON_RUNTIME;
  // The process answered "no operation for now": exit 0 means idle.
  void MarkOutOfOps(const std::string& allocation_id) ON_RUNTIME;
  // Asks for a scheduling pass after the current batch.
  void RequestPass() { deps_.loop->RequestPass(); }

  // The loop's hooks.
  void SchedulePass() ON_RUNTIME;
  void Tick() ON_RUNTIME;

 private:
  std::string PoolOf(const AllocationRuntime& alloc) const ON_RUNTIME;
  const JobSpec* JobOf(const AllocationRuntime& alloc) const ON_RUNTIME;
  // Pending, and its job holds its queued allocations (JobSpec::hold_queued): not placed, not
  // submitted to Slurm, no demand for the provisioner.
  bool Held(const AllocationRuntime& alloc) const ON_RUNTIME;
  static std::string ResourcesId(const AllocationRuntime& alloc, size_t rank);
  AllocationRuntime* Find(const std::string& allocation_id) ON_RUNTIME;
  void SetState(AllocationRuntime& alloc, AllocationRuntime::State state) ON_RUNTIME;
  void ErasePending(const std::string& allocation_id) ON_RUNTIME;
  // Marks it terminated in the runtime (state, token, Slurm job, waiters, reaped later); the
  // caller takes it off the queue.
  void EndRecord(AllocationRuntime& alloc) ON_RUNTIME;
  void Notify(const std::string& allocation_id) ON_RUNTIME;
  void Log(const AllocationRuntime& alloc, const std::string& message) ON_RUNTIME;

  scheduler::ClusterSnapshot Snapshot() const ON_RUNTIME;
  // Runs the pass now (an agent's request answers with what it placed).
  void SchedulePassNow() ON_RUNTIME;
  Status Start(AllocationRuntime& alloc,
               const std::vector<scheduler::AgentSlots>& parts) ON_RUNTIME;
  void KillResources(AllocationRuntime& alloc) ON_RUNTIME;
  std::vector<AllocationRuntime*> OnAgent(const std::string& agent_id) const ON_RUNTIME;
  // Publishes the slots `alloc` holds now to the view (ListAgents reads them there).
  void PublishHeld(const AllocationRuntime& alloc) ON_RUNTIME;
  // One process group ended; the allocation ends with the last of them.
  Status HandleResourceExit(AllocationRuntime& alloc, const std::string& agent_id, int exit_code,
                            const std::string& error, bool infrastructure = false) ON_RUNTIME;
  Status HandleExit(AllocationRuntime& alloc, int exit_code, const std::string& error,
                    bool infrastructure) ON_RUNTIME;
  // Drops allocations whose end was handled (their rows say the rest).
  void Reap() ON_RUNTIME;

  Result<nlohmann::json> RegisterAgentNow(const std::string& agent_id,
                                          const nlohmann::json& body) ON_RUNTIME;
  Status HandleAgentEventsNow(const std::string& agent_id, const nlohmann::json& body) ON_RUNTIME;
  Status UpdateJobNow(const std::string& job_id, const nlohmann::json& update) ON_RUNTIME;
  std::vector<JobView> ListJobsNow(const std::string& pool_filter) ON_RUNTIME;

  // Slurm (allocation_slurm.cc).
  bool IsSlurmPool(const std::string& pool) const;
  void SlurmPass() ON_RUNTIME;
  void SlurmAgentRegistered(const std::string& agent_id) ON_RUNTIME;
  bool DeferSlurmExit(AllocationRuntime& alloc, const std::string& agent_id, int exit_code,
                      const std::string& error) ON_RUNTIME;
  void OverlaySlurmJob(const std::string& job_id, JobView* job) ON_RUNTIME;
  void SlurmPriorityChanged(const std::string& job_id, int priority) ON_RUNTIME;
  // Hands the provisioner what waits and what each agent does (allocation_provisioning.cc).
  void ProvisionerTick() ON_RUNTIME;

  int64_t Now() const { return deps_.clock->NowMicros(); }

  const Deps deps_;
  AllocationOwner* owner_ = nullptr;
  std::string cluster_id_;
  std::string master_id_;
  std::unique_ptr<class SlurmService> slurm_;  // set when resource_manager.type is slurm
  std::map<std::string, JobSpec> jobs_ GUARDED_BY(runtime_role);
  std::map<std::string, std::unique_ptr<AllocationRuntime>> allocations_ GUARDED_BY(runtime_role);
  std::deque<std::string> pending_ GUARDED_BY(runtime_role);  // waiting for slots, FIFO
  std::vector<std::string> ended_ GUARDED_BY(runtime_role);   // to Reap
};

}  // namespace det::master::server
