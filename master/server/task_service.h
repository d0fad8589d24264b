#pragma once
// TaskService: commands, notebooks, shells and TensorBoards (Determined's "NTSC" tasks). Each is
// a job with one allocation that waits in the same queue as experiments: the Master adds the
// tasks' jobs and requests to each scheduling snapshot (AddToSnapshot) and hands the tasks'
// placements back (Start); agent events for a task's allocation come here too. Every change is
// persisted (generic_tasks, migration 0016) before it is acted on, so a restarted master keeps
// its tasks and re-adopts the running ones.
//
// Own state under its own mutex, called from the runtime loop (the allocations service) and
// from requests. Lock order: this one, then the agent service's; `on_change` (which asks the
// runtime loop for a scheduling pass) runs with no lock of ours held.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "master/scheduler/pool_config.h"
#include "master/scheduler/types.h"
#include "master/server/agent_service.h"
#include "master/server/auth_service.h"
#include "master/server/task_config.h"
#include "master/server/task_secrets_box.h"
#include "master/store/store.h"

namespace det::master::server {

struct LaunchTaskRequest {
  TaskType type = TaskType::kCommand;
  nlohmann::json config = nlohmann::json::object();  // templates already merged in
  std::string context_tgz;                           // "" when none
  std::vector<int64_t> experiment_ids;               // TensorBoard
  std::vector<int64_t> trial_ids;                    // TensorBoard
  int64_t workspace_id = 1;                          // checked by the caller
};

// One task as the API shows it.
struct TaskView {
  store::GenericTaskRow row;
  TaskType type = TaskType::kCommand;
  std::string resource_pool;  // resolved
  int priority = 42;
  bool terminal = false;
};

class TaskService {
 public:
  struct Options {
    const scheduler::ResourcePoolsConfig* pools = nullptr;
    std::string cluster_id;
    std::string master_id;
    // The key file that seals each task's secrets in the store (task_secrets_box.h), opened or
    // created on first use; "" stores them unsealed (tests of this service alone).
    std::string secrets_key_path;
    // The master's task_container_defaults (for each task's startup_hook); null: none.
    const nlohmann::json* task_container_defaults = nullptr;
    // The pool a task of the workspace asking for `pool` ("" : none named) and `slots` runs
    // in, refused when not available to it (WorkspaceService::ResolvePool); null: as asked.
    std::function<Result<std::string>(int64_t workspace_id, const std::string& pool,
                                      int64_t slots)>
        resolve_pool = nullptr;
  };

  TaskService(store::Store* store, const Clock* clock, AuthService* auth, AgentService* agents,
              Options options);

  // The ids the master learns at Start (passed to every task's process).
  void SetClusterIds(std::string cluster_id, std::string master_id) {
    options_.cluster_id = std::move(cluster_id);
    options_.master_id = std::move(master_id);
  }
  // Called after every change that needs a scheduling pass (set by the Master).
  void SetOnChange(std::function<void()> on_change) { on_change_ = std::move(on_change); }

  // Loads every task; re-registers the allocation tokens of live ones. Running ones wait for
  // their agent to report them (ReconcileAgent) until `adopt_deadline_micros`.
  Status Restore(int64_t adopt_deadline_micros) EXCLUDES(mu_);

  Result<TaskView> Launch(const LaunchTaskRequest& req, const Principal& who) EXCLUDES(mu_);
  Result<TaskView> Get(const std::string& task_id) EXCLUDES(mu_);
  // Tasks of `type` (every type when nullopt), oldest first.
  std::vector<TaskView> List(std::optional<TaskType> type) EXCLUDES(mu_);
  // Owner or admin only. A queued task ends at once; a running one is killed on its agent.
  Status Kill(const std::string& task_id, const Principal& who) EXCLUDES(mu_);
  // The task's context directory (tar.gz), "" when it has none; NotFound for unknown tasks.
  Result<std::string> Context(const std::string& task_id) EXCLUDES(mu_);
  bool Has(const std::string& task_id) EXCLUDES(mu_);
  // The owner of a task (the permission checks of its log lines); nullopt for an unknown one.
  std::optional<int64_t> OwnerOf(const std::string& task_id) EXCLUDES(mu_);
  // The task whose allocation `allocation_id` is; nullopt when it is no task's.
  std::optional<std::string> TaskOfAllocation(const std::string& allocation_id) EXCLUDES(mu_);

  // The task's service registers where it listens ("host:port") and that it is ready.
  // `ssh_user` (shells): the user its sshd logs in, shown as agentUserGroup.user.
  Status SetProxyAddress(const Principal& who, const std::string& allocation_id,
                         const std::string& address, const std::string& ssh_user = "")
      EXCLUDES(mu_);
  Status SetReady(const Principal& who, const std::string& allocation_id) EXCLUDES(mu_);

  // Where /proxy/{task_id}/ goes: the service's host:port, when the permissions policy
  // (core::AuthorizeTaskProxy: owner or admin; a shell's tunnel without a credential) lets
  // `who` through (null: no credential; Unauthenticated or PermissionDenied otherwise);
  // Unavailable while the task has not registered. `tunnel`: a WebSocket that carries a
  // shell's ssh. Counts as activity for idle_timeout.
  struct ProxyTarget {
    std::string address;
    TaskType type = TaskType::kCommand;
    std::string notebook_token;  // sent to Jupyter as "Authorization: token ..."
  };
  Result<ProxyTarget> Proxy(const std::string& task_id, const Principal* who, bool tunnel = false)
      EXCLUDES(mu_);
  // Proxied traffic: resets the task's idle timer.
  void Touch(const std::string& task_id) EXCLUDES(mu_);

  // Scheduling (called by the Master with its mutex held).
  void AddToSnapshot(scheduler::ClusterSnapshot* snap) EXCLUDES(mu_);
  bool HasPending() EXCLUDES(mu_);
  bool Owns(const std::string& allocation_id) EXCLUDES(mu_);
  Status Start(const std::string& allocation_id, const std::vector<scheduler::AgentSlots>& parts)
      EXCLUDES(mu_);
  // An agent event for a task's allocation; false when the allocation is not a task's.
  bool HandleAgentEvent(const std::string& agent_id, const nlohmann::json& event) EXCLUDES(mu_);
  // A (re-)registered agent says what runs: tasks' allocations in `running` are adopted (true
  // for those ids), tasks placed there that neither run nor start are lost.
  std::set<std::string> ReconcileAgent(const std::string& agent_id,
                                       const std::set<std::string>& running,
                                       const std::set<std::string>& starting) EXCLUDES(mu_);
  void AgentLost(const std::string& agent_id) EXCLUDES(mu_);
  // Idle timeouts and re-adoption deadlines.
  void Tick() EXCLUDES(mu_);

  // Job queue rows of the tasks: job id -> (task, type, name, owner).
  struct JobInfo {
    std::string task_id;
    std::string type;  // TYPE_COMMAND, TYPE_NOTEBOOK, ...
    std::string name;
    std::string username;
    int64_t submission_time = 0;
    int64_t owner_id = 0;
  };
  std::optional<JobInfo> Job(const std::string& job_id) EXCLUDES(mu_);
  // `det job update` on a live task's job (one change, the job queue's update shape): priority
  // in a priority pool, weight in a fair share pool, by the scheduler's rules
  // (scheduler::SetPriority / SetWeight); stored in the task's config (resources.priority,
  // resources.weight) so the next scheduling pass and a restarted master see it. A task does
  // not change pool (Determined: experiments only) and keeps its place by priority and
  // submission time (aheadOf/behindOf are refused). NotFound when the job is no live task's.
  // The caller checks the owner rule and runs a scheduling pass.
  Status UpdateJob(const std::string& job_id, const nlohmann::json& update) EXCLUDES(mu_);
  // Live allocations (`det task list`): task id, allocation id, state, slots, agent.
  std::vector<TaskView> LiveTasks() EXCLUDES(mu_);

  // Log lines of a task after `after_id`; and waiting for more (a log follow).
  Result<std::vector<store::TaskLogRow>> Logs(const std::string& task_id, int64_t after_id,
                                              int64_t limit, bool descending);
  void NotifyLogs(const std::string& task_id) EXCLUDES(mu_);
  void WaitForLogs(const std::string& task_id, int64_t after_version, int64_t timeout_ms)
      EXCLUDES(mu_);
  int64_t LogVersion() EXCLUDES(mu_);

 private:
  struct Task {
    store::GenericTaskRow row;
    TaskConfig config;
    TaskType type = TaskType::kCommand;
    nlohmann::json launch_env = nlohmann::json::object();  // extra DET_* for the process
    int64_t last_activity = 0;
    int64_t adopt_deadline = 0;  // restored as running: its agent must report it by then
    bool started = false;        // the agent said it started
  };
  static bool Terminal(const Task& t) { return t.row.state == "STATE_TERMINATED"; }
  bool PendingLocked(const Task& t) const REQUIRES(mu_) {
    return t.row.state == "STATE_QUEUED" && !Terminal(t);
  }
  Task* FindLocked(const std::string& task_id) REQUIRES(mu_);
  Task* FindByAllocationLocked(const std::string& allocation_id) REQUIRES(mu_);
  TaskView ViewLocked(const Task& t) const REQUIRES(mu_);
  // Refuses a task whose slots no connected agent of its pool has (Determined's "request
  // unfulfillable").
  Status CheckFulfillable(const TaskConfig& cfg) const;
  // `pool` ("" : the cluster's default for `slots`) as the scheduler resolves it.
  std::string ResolvedPool(const std::string& pool, int64_t slots) const;
  std::string PoolLocked(const Task& t) const REQUIRES(mu_);
  // Persists the new row, then applies it; the log line (if any) is added as the master's.
  Status SaveLocked(Task& t, store::GenericTaskRow next) REQUIRES(mu_);
  // Writes `row` with its secrets sealed ({"sealed": ...}); and opens them again (a row stored
  // before sealing existed is read as it is).
  Status UpsertSealedLocked(const store::GenericTaskRow& row) REQUIRES(mu_);
  Status UnsealLocked(store::GenericTaskRow* row) REQUIRES(mu_);
  Result<const TaskSecretsBox*> BoxLocked() REQUIRES(mu_);
  Status EndLocked(Task& t, std::optional<int64_t> exit_code, const std::string& error)
      REQUIRES(mu_);
  void MasterLogLocked(const Task& t, const std::string& message) REQUIRES(mu_);
  // The start command's entrypoint; `links`: LinkCommands of its bind_mounts, run first.
  nlohmann::json EntrypointLocked(const Task& t, const std::string& links) const REQUIRES(mu_);
  void Changed();

  store::Store* store_;
  const Clock* clock_;
  AuthService* auth_;
  AgentService* agents_;
  Options options_;
  std::function<void()> on_change_;

  mutable Mutex mu_;
  std::condition_variable_any logs_cv_;
  int64_t log_version_ GUARDED_BY(mu_) = 0;
  std::map<std::string, Task> tasks_ GUARDED_BY(mu_);
  std::optional<TaskSecretsBox> box_ GUARDED_BY(mu_);
};

}  // namespace det::master::server
