#pragma once
// RuntimeView: what readers need of the live runtime, published by the runtime loop's services
// after each change and read without waiting for the loop: the presented state of a live
// experiment or trial (STATE_RUNNING, ...), a trial's current run and task, the allocation it
// runs in. Its own lock is held only to copy a few fields in or out, never while calling out.

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

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
};

}  // namespace det::master::server
