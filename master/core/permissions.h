#pragma once
// Who may do what: Determined's open-source permission model in one pure function.
//
//   - anyone logged in reads everything;
//   - the owner of an experiment (or of a model, template, workspace, project) or an admin
//     changes or deletes it, and with an experiment its trials and checkpoints;
//   - only admins manage users, agents, resource pools, webhooks and the master config;
//   - a trial's allocation token reaches only its own trial and allocation; it also reads its
//     experiment and the checkpoints of its experiment or owner (warm starts); never more.
// No I/O: callers look up the owner and pass it in.

#include <cstdint>
#include <optional>
#include <string>

namespace det::master::core {

// The caller: a user session, or a trial's allocation token.
struct Subject {
  int64_t user_id = 0;
  std::string username;
  bool admin = false;
  bool is_allocation = false;
  std::string allocation_id;  // of the allocation token
  int64_t trial_id = 0;       // of the allocation token
  // The allocation's experiment and its owner, where the resource needs them (reads).
  int64_t experiment_id = 0;
  int64_t owner_id = 0;
};

enum class Action {
  kRead,           // any GET of shared state
  kCreate,         // create something the caller will own (experiment, model, template, ...)
  kModify,         // change or delete an owned resource (owner or admin)
  kEditShared,     // change what every user may change (models and their versions, as Determined)
  kManageUsers,    // create users, change others' flags (admin only)
  kManageCluster,  // agents, slots, resource pools, master config, webhooks (admin only)
  kTrialReport,    // a trial's own reports: metrics, logs, checkpoints, progress, searcher ops
};

// What the action is on. `owner_id` is the owning user (0: none, e.g. a cluster-wide thing).
// `trial_id` / `allocation_id` / `experiment_id` name the trial resources an allocation token
// may reach (0 / "": not a trial resource).
struct Resource {
  std::string kind;  // "experiment 5", "trial 7", "user 3", "agent a1": for messages
  int64_t owner_id = 0;
  int64_t trial_id = 0;
  int64_t experiment_id = 0;
  std::string allocation_id;
  // A trial may read it although it is not its own when it is of the trial's experiment or
  // owner (a checkpoint to warm-start from).
  bool readable_by_owner_trials = false;
};

struct AccessDecision {
  bool allowed = false;
  std::string reason;  // why not (empty when allowed)
};

// The one permission rule. Pure.
AccessDecision Authorize(const Subject& who, Action action, const Resource& what);

// A task's service through the master's /proxy/{task_id}/ (a notebook's Jupyter, a
// TensorBoard, a shell's sshd).
struct TaskProxy {
  std::string task_id;
  std::string task_type;  // COMMAND | NOTEBOOK | SHELL | TENSORBOARD
  int64_t owner_id = 0;
  std::string owner_name;
};
// Its owner or an admin; never an allocation token. `who` is null when the request carries no
// credential: then only a shell's tunnel (`tunnel`: a WebSocket carrying ssh) passes, as in
// Determined, whose shells register their port unauthenticated: the sshd admits only the key
// made for that shell, which only its owner or an admin can read (GET /api/v1/shells/{id}).
AccessDecision AuthorizeTaskProxy(const Subject* who, const TaskProxy& what, bool tunnel);

const char* ActionName(Action action);

}  // namespace det::master::core
