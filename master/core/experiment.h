#pragma once
// core::Experiment: one experiment's trials and searcher, and its decision step.
//
// Decide(event) changes the experiment and returns what the change means outside it: the
// writes to store (the experiment's and trials' new states, new trials, restart counts) and
// the effects to release once they are stored (a new run queued, a queued one dropped, a
// process asked to stop or killed, operation polls woken). There is no store, clock, lock or
// thread inside, so a test drives it event by event, and the cluster simulation (master/sim)
// runs this type, not a copy of the master's rules.
//
// A refusal (a completion of the wrong length, a second early exit, a move the experiment's
// state forbids) is returned before anything changes. Any other error is a broken rule (a
// trial moved along a transition that lifecycle.h forbids, a searcher error); the experiment's
// state is then not to be trusted, and its owner restores it from what was stored.

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "common/status.h"
#include "master/core/exit_policy.h"
#include "master/core/lifecycle.h"
#include "master/core/trial.h"
#include "master/searcher/searcher.h"

namespace det::master::core {

struct ExperimentRules {
  int64_t max_restarts = 5;
  // The length a progress report on a trial without a pending operation is a fraction of.
  uint64_t max_length = 1;
  // `det experiment continue`: it ends by its continued trials' outcome.
  bool continued = false;
};

// --- Events -------------------------------------------------------------------------------
struct Activate {};  // the first one also asks the searcher for its first trials
struct Pause {};
struct Stop {
  RunState stopping = RunState::kStoppingCanceled;  // or kStoppingKilled
};
struct Placed {  // the trial's queued allocation got its slots
  std::string request_id;
};
struct CompleteOperation {  // POST .../searcher/completed_operation
  std::string request_id;
  int64_t trial_id = 0;  // named in a refusal
  uint64_t length = 0;
  double metric = 0;
};
struct ProcessExited {  // the trial's allocation ended, and how
  std::string request_id;
  ProcessEnd end;
};
struct EarlyExit {  // POST .../early_exit
  std::string request_id;
  int64_t trial_id = 0;  // named in a refusal
  searcher::ExitedReason reason = searcher::ExitedReason::kErrored;
};
struct KillTrial {
  std::string request_id;
};
struct ReportProgress {  // `fraction` of the pending operation (>= 0; more than 1 counts as 1)
  std::string request_id;
  double fraction = 0;
};
struct MetricsReported {  // a validation report, for ASHA's time_metric
  std::string request_id;
  nlohmann::json metrics;
};
// The experiment was rebuilt from what was stored (a master restart, or a decision whose writes
// failed): what a crash between a write and the next left undone is done now. Its trials
// follow its state, the searcher hears of the trials the rows show ended, an active search
// that was never started is started, and every active trial without a process gets one.
struct Restored {};
// `det experiment continue` of an ended experiment: it is ACTIVE again under `rules` (which
// mark it continued), and every trial that did not complete runs again, restarts reset.
struct Continue {
  ExperimentRules rules;
};
using ExperimentEvent =
    std::variant<Activate, Pause, Stop, Placed, CompleteOperation, ProcessExited, EarlyExit,
                 KillTrial, ReportProgress, MetricsReported, Restored, Continue>;

// --- What a decision means outside the experiment ------------------------------------------
struct TrialStateChange {
  std::string request_id;
  RunState from;
  RunState to;
};

// What happens to a trial's process, in the order decided (a run queued, then asked to stop,
// is asked once it is queued).
struct ProcessEffect {
  enum class Kind {
    kRequest,  // a new run is queued (the trial's presence is now kQueued)
    kDrop,     // its queued allocation ends unplaced, without an exit to decide on
    kStop,     // its process is asked to checkpoint and stop (preemption)
    kKill,     // its process is killed
  };
  Kind kind;
  std::string request_id;
  bool operator==(const ProcessEffect&) const = default;
};

struct Decision {
  // Writes, stored in one transaction before any effect is released.
  std::optional<RunState> experiment_to;        // the experiment's new state
  std::vector<searcher::CreateAction> created;  // new trials, in creation order
  std::vector<TrialStateChange> moves;          // in the order made
  std::vector<std::string> restarts_changed;    // trials whose restart count changed
  std::vector<std::string> searcher_changed;    // trials whose searcher fields changed
  bool searcher_heard = false;  // the searcher was told something: its journal record
  double progress = 0;          // the search's progress after the decision, in [0, 1]

  // Effects, released once the writes are stored.
  std::vector<ProcessEffect> processes;
  std::vector<std::string> woken;  // its operation (or its being closed) changed: wake polls

  // The answers to the event.
  std::optional<ExitOutcome> exit;           // ProcessExited: what the exit meant
  std::optional<CompletionKind> completion;  // CompleteOperation

  bool empty() const;
};

class Experiment {
 public:
  // A new experiment (PAUSED, nothing asked of the searcher yet).
  Experiment(std::unique_ptr<searcher::Searcher> searcher, ExperimentRules rules);
  // One restored from what was stored: the searcher from its snapshot, the trials with their
  // states and searcher fields (presence as the restored allocations say).
  Experiment(std::unique_ptr<searcher::Searcher> searcher, ExperimentRules rules, RunState state,
             bool initialized, std::optional<SearcherShutdown> shutdown, std::vector<Trial> trials);
  Experiment(Experiment&&) = default;
  Experiment& operator=(Experiment&&) = default;

  Result<Decision> Decide(const ExperimentEvent& event);

  // What a process of the trial asking for its operation is told (GET .../searcher/operation).
  Result<OpAnswer> Answer(const std::string& request_id) const;

  RunState state() const { return state_; }
  bool initialized() const { return initialized_; }
  const std::optional<SearcherShutdown>& shutdown() const { return shutdown_; }
  const ExperimentRules& rules() const { return rules_; }
  const searcher::Searcher& searcher() const { return *searcher_; }
  // For the searcher journal alone, which drains what the searcher recorded since its last
  // write: nothing decided may go through it.
  searcher::Searcher& journal_searcher() { return *searcher_; }
  // In creation order (a deque: a trial's address stays put while others are added).
  const std::deque<Trial>& trials() const { return trials_; }
  const Trial* Find(const std::string& request_id) const;

 private:
  Trial* MutableTrial(const std::string& request_id);
  Trial& Add(const searcher::CreateAction& create);
  Status SetState(Trial& t, RunState to);
  Status SetExperimentState(RunState to);
  void Request(Trial& t);
  void Effect(ProcessEffect::Kind kind, const Trial& t);
  void MarkSearcher(const Trial& t);
  void SearcherExit(Trial& t, std::optional<searcher::ExitedReason> reason,
                    std::vector<searcher::Action>* actions);
  // Every trial follows the experiment to `to` (core::MoveWithExperiment); `moved` tells
  // whether any did.
  Status MoveTrials(RunState to, std::vector<searcher::Action>* actions, bool* moved);
  // A stopping experiment's trials end, and so do those the searcher creates meanwhile.
  Status EndTrials();
  Status ProcessActions(std::vector<searcher::Action> actions);
  Status MaybeFinish();

  Status OnActivate();
  Status OnPause();
  Status OnStop(const Stop& e);
  Status OnPlaced(const Placed& e);
  Status OnComplete(const CompleteOperation& e);
  Status OnExit(const ProcessExited& e);
  Status OnEarlyExit(const EarlyExit& e);
  Status OnKillTrial(const KillTrial& e);
  Status OnProgress(const ReportProgress& e);
  Status OnMetrics(const MetricsReported& e);
  Status OnRestored();
  Status OnContinue(const Continue& e);

  std::unique_ptr<searcher::Searcher> searcher_;
  ExperimentRules rules_;
  RunState state_ = RunState::kPaused;
  bool initialized_ = false;
  std::optional<SearcherShutdown> shutdown_;
  std::deque<Trial> trials_;
  std::unordered_map<std::string, size_t> by_request_;
  bool ending_ = false;                    // inside EndTrials
  Decision* out_ = nullptr;                // the decision being made
  std::unordered_set<std::string> dirty_;  // its searcher_changed, without repeats
};

}  // namespace det::master::core
