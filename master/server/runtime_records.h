#pragma once
// The runtime's records: what the experiments-and-trials service (ExperimentRuntime,
// TrialRuntime) and the allocations service (AllocationRuntime, JobSpec) keep of each row while
// the master runs, plus the state that only matters while it runs. They live on the runtime loop
// (runtime_loop.h) and are private to master/server.

#include <cstdint>
#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "master/config/experiment_config.h"
#include "master/core/experiment.h"
#include "master/core/lifecycle.h"
#include "master/core/states.h"
#include "master/scheduler/queue_position.h"
#include "master/searcher/searcher.h"
#include "master/server/searcher_journal_service.h"
#include "master/store/decision_writes.h"
#include "master/store/store.h"

namespace det::master::server {

struct TrialRuntime;

struct ExperimentRuntime {
  int64_t id = 0;
  config::ExperimentConfig config;
  // Its decisions: its state, its trials' states and searcher bookkeeping, its searcher
  // (master/core/experiment.h). Only core::Experiment::Decide changes them.
  std::unique_ptr<core::Experiment> core;
  std::map<std::string, int64_t> trial_by_request;  // stored trials' ids
  // The same trials' records, hashed: a decision over 20,000 trials looks each one up several
  // times (ExperimentService::TrialOf).
  std::unordered_map<std::string, TrialRuntime*> records;
  int64_t owner_id = 0;
  std::string username;
  std::string job_id;
  int64_t submission_time = 0;
  // Set by `det job update --ahead-of/--behind-of` (and reset by a priority change); unset
  // means the submission time. Persisted in the snapshot.
  std::optional<scheduler::QueuePosition> queue_position;
  // Request ids of the trials whose searcher fields changed since the last persist (the
  // decisions' searcher_changed, kept until a persist succeeds).
  std::set<std::string> searcher_dirty;
  double stored_progress = -1;  // the progress last written: unchanged progress is not
  // A sliced decision's later slice was refused: the store holds its state with only some of
  // its trials moved (as after a crash), and the next decision about it first makes the others
  // follow, as a restore does (core::Restored).
  bool follow_stored = false;

  core::RunState state() const { return core->state(); }
};

// The rules of an experiment's decisions that its config sets.
core::ExperimentRules RulesOf(const config::ExperimentConfig& config, bool continued);

struct TrialRuntime {
  int64_t id = 0;
  int64_t experiment_id = 0;
  std::string request_id;
  // Its state, restarts and searcher fields, in its experiment's core::Experiment (whose trials
  // keep their addresses); set when the record is made.
  const core::Trial* decided = nullptr;
  int64_t run_id = 0;
  std::string task_id;
  std::string allocation_id;  // live allocation, "" if none
  // What a process of the trial is started with (its row's, held so a start reads no row).
  int64_t seed = 0;
  nlohmann::json hparams = nlohmann::json::object();
  std::string warm_start_checkpoint_uuid;
  // The current run's process, for what its exit 0 means (core::ProcessEnd): whether it
  // followed the searcher (told to train by GET .../operation, or reported progress on an
  // operation or completed one) and whether it completed one; the steps of the checkpoint it
  // started from tell whether it left one further on (a new checkpoint of the same steps, e.g.
  // saved at start-up, is not progress: it would run such a script forever).
  struct RunProgress {
    std::string allocation_id;
    int64_t start_steps = 0;
    bool followed_op = false;
    bool completed_op = false;
  };
  RunProgress run_progress;

  core::RunState state() const { return decided->state; }
  int64_t restarts() const { return decided->restarts; }
  // What the searcher snapshot keeps of this trial (ops: pending ValidateAfter lengths,
  // absolute; completed_op: the last length reported completed, so retries are no-ops;
  // closed: closed by the searcher; exited_early: reported an early exit such as invalid hp;
  // searcher_exited: TrialExited already given to the searcher).
  const SearcherTrialState& searcher() const { return decided->searcher; }
};

// An experiment as the scheduler sees it: one job of the queue.
struct JobSpec {
  std::string job_id;
  int64_t experiment_id = 0;
  std::string name;
  std::string username;
  int64_t submission_time = 0;
  std::optional<int64_t> priority;
  double weight = 1;
  std::optional<int64_t> max_slots;
  std::optional<scheduler::QueuePosition> position;
  std::string pool;  // resolved (the default pool when the config names none)
  bool single_node = false;
  int64_t preemption_timeout_seconds = 0;
  bool terminal = false;
  // Its queued allocations wait unplaced: the experiment is paused or stopping (its decision
  // dropped them already; this guards against one left behind).
  bool hold_queued = false;
};

struct AllocationRuntime {
  using State = core::AllocationState;
  // One process group on one agent; rank = index in `resources`.
  struct Resource {
    std::string agent_id;
    std::vector<int> slot_ids;
    bool started = false;
    bool exited = false;
  };
  std::string id;
  std::string task_id;
  std::string job_id;
  int64_t trial_id = 0;
  int64_t experiment_id = 0;
  int64_t slots = 1;
  State state = State::kPending;
  // The allocation's token, made when it is placed and handed to its processes; only its digest
  // is stored, so an allocation restored at startup has token_digest alone.
  std::string token;
  std::string token_digest;
  // It has a row: written when placed (a pending allocation has none), or restored from one.
  bool stored = false;
  std::vector<Resource> resources;  // empty while pending
  std::optional<int> exit_code;     // the first non-zero exit of a resource, else 0
  std::string exit_error;
  bool backfilled = false;
  bool released = false;  // preempted by the scheduler for other work
  int64_t queued_at = 0;
  bool preempt = false;  // graceful stop requested
  bool preempt_acked = false;
  bool kill_requested = false;
  bool out_of_ops = false;     // answered "no operation for now"; exit 0 means idle
  int64_t kill_deadline = 0;   // micros; kill after preemption_timeout
  int64_t adopt_deadline = 0;  // restored at startup: agent must report it by then
  // Restored at startup: a previous master may have answered "no operation for now" (the
  // answer is not stored), so an exit 0 with no pending operation is read the same way.
  bool restored = false;
};

// How an allocation ended, for the experiments service to decide its trial's fate.
struct AllocationEnd {
  int exit_code = 0;
  std::string error;
  bool never_started = false;
  bool killed_by_user = false;
  bool preemption_acked = false;
  bool infrastructure = false;
  bool maybe_out_of_ops = false;  // answered "no operation for now" (or restored)
};

// Trials created by one run of searcher actions, before they are stored (ids 0) and published.
struct StagedTrials {
  struct Entry {
    std::unique_ptr<TrialRuntime> trial;
    store::TrialRow row;
    bool request = false;  // its decision queued a run of it
    bool queued = false;   // stored with its first run: PublishStaged queues it
    int64_t queued_at = 0;  // micros, when queued (the row's run_queued_at)
  };
  std::vector<Entry> entries;
  // request id -> index in entries (hashed: a 20,000-trial search looks each one up)
  std::unordered_map<std::string, size_t> by_request;
  size_t published = 0;  // entries[0, published) are part of the runtime (PublishStaged)
  bool empty() const { return entries.empty(); }
};

// What one decision changes of one existing trial: its write and its new run are made only
// when its slice is stored (a decision over 20,000 trials builds them slice by slice).
struct TrialChange {
  TrialRuntime* trial = nullptr;
  std::optional<core::RunState> to;  // its new state
  enum class End { kKeep, kSet, kClear } end = End::kKeep;  // its end time
  bool restarts = false;  // its restart count changed
  bool request = false;   // a run of it is queued
  bool same_run = false;  // ... the one a restore found queued, again (at queued_at)
  int64_t queued_at = 0;
};

// A slice of a decision: some of its trials' changes, stored in one transaction, then their
// process effects in the order decided.
struct DecisionSlice {
  std::vector<TrialChange> changes;
  std::vector<std::pair<size_t, core::ProcessEffect::Kind>> effects;  // (change, kind)
};

// What a decision over more trials than one slice still has to store and release after its
// first slice (ExperimentService::Carry): the other slices, one loop task each, then `last`.
struct PendingDecision {
  int64_t decided_at = 0;  // micros: the end time of the trials it ends
  std::deque<DecisionSlice> slices;
  store::DecisionWrites last;  // stored with the last slice: a terminal state and its webhooks
  std::vector<std::string> woken;
  bool persist = false;   // the searcher journal is told after the last slice
  bool terminal = false;  // the experiment ends: its job is published and its checkpoints GCed
};

}  // namespace det::master::server
