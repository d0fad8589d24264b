#pragma once
// RuntimeView: what readers need of the live runtime, published by the runtime loop's services
// after each change and read without waiting for the loop: the presented state of a live
// experiment or trial (STATE_RUNNING, ...), a trial's current run and task, the allocation it
// runs in, and the slots each allocation holds on agents (GET /api/v1/agents). Its own locks are
// held only to copy a few fields in or out, never while calling out.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/thread_annotations.h"
#include "master/core/lifecycle.h"
#include "master/core/states.h"

namespace det::master::server {

class RuntimeView {
 public:
  struct Trial {
    int64_t experiment_id = 0;
    core::RunState state = core::RunState::kActive;
    int64_t run_id = 0;
    std::string task_id;
    std::string allocation_id;                      // "" when no process runs or waits
    std::optional<core::AllocationState> activity;  // that allocation's state
  };

  // A live experiment (it has a runtime); Remove when it is deleted.
  void PutExperiment(int64_t id, core::RunState state) EXCLUDES(mu_);
  void RemoveExperiment(int64_t id) EXCLUDES(mu_);
  // A live trial's lifecycle fields (its allocation is kept).
  void PutTrial(int64_t id, int64_t experiment_id, core::RunState state, int64_t run_id,
                const std::string& task_id) EXCLUDES(mu_);
  void RemoveTrial(int64_t id) EXCLUDES(mu_);
  // The trial's allocation and its state; nullopt state: it has none now.
  void SetAllocation(int64_t trial_id, const std::string& allocation_id,
                     std::optional<core::AllocationState> state) EXCLUDES(mu_);

  // What an allocation holds on one agent: those of its resources that have not exited.
  struct Held {
    std::string agent_id;
    std::vector<int> slot_ids;
    std::string resources_id;
  };
  // Replaces what the allocation holds (empty: nothing, e.g. once it has ended).
  void SetHeld(const std::string& allocation_id, std::vector<Held> held) EXCLUDES(held_mu_);
  // The held slots of one agent: slot id -> the allocation and resources holding it.
  struct SlotUse {
    std::string allocation_id;
    std::string resources_id;
  };
  std::map<int, SlotUse> SlotsOn(const std::string& agent_id) const EXCLUDES(held_mu_);

  std::optional<Trial> FindTrial(int64_t id) const EXCLUDES(mu_);
  // A live trial's current run (the check of every metric report: no strings copied).
  std::optional<int64_t> RunOf(int64_t trial_id) const EXCLUDES(mu_);
  std::optional<int64_t> TrialOfTask(const std::string& task_id) const EXCLUDES(mu_);
  // STATE_... of a live experiment; nullopt when it has no runtime.
  std::optional<std::string> PresentedExperimentState(int64_t id) const EXCLUDES(mu_);
  // The trial's presented state from its stored state and its live allocation, if any.
  std::string PresentedTrialState(int64_t trial_id, const std::string& db_state) const
      EXCLUDES(mu_);

 private:
  struct Experiment {
    core::RunState state = core::RunState::kPaused;
    int64_t running = 0;   // trials whose allocation runs
    int64_t assigned = 0;  // ... or is placed and starting
  };
  // Moves the trial's contribution to its experiment's counts from `before` to its activity.
  void Recount(const Trial& t, std::optional<core::AllocationState> before) REQUIRES(mu_);

  mutable Mutex mu_;
  std::unordered_map<int64_t, Experiment> experiments_ GUARDED_BY(mu_);
  std::unordered_map<int64_t, Trial> trials_ GUARDED_BY(mu_);
  std::unordered_map<std::string, int64_t> trial_by_task_ GUARDED_BY(mu_);
  // Apart from mu_, which every metric report takes.
  mutable Mutex held_mu_;
  std::unordered_map<std::string, std::vector<Held>> held_ GUARDED_BY(held_mu_);
  std::unordered_map<std::string, std::map<int, SlotUse>> slots_by_agent_ GUARDED_BY(held_mu_);
};

}  // namespace det::master::server
