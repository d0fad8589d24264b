#include "master/sim/cluster_sim.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <utility>
#include <variant>

#include "master/core/exit_policy.h"
#include "master/core/experiment_moves.h"
#include "master/core/lifecycle.h"
#include "master/core/states.h"
#include "master/core/trial_searcher.h"
#include "master/searcher/searcher.h"
#include "master/searcher/simulate.h"

namespace det::master::sim {

namespace {

using core::RunState;
using searcher::Action;

// A fake process of one allocation.
enum class Phase {
  kQueued,    // waiting for a slot
  kAsking,    // started (or between operations): asks for its next one
  kTraining,  // training to `length`
  kExiting,   // decided to exit (or was killed / lost): its exit is still to arrive
};

struct Alloc {
  int trial = -1;
  Phase phase = Phase::kQueued;
  uint64_t length = 0;
  bool told_none = false;
  bool followed = false;    // told to train (core::ProcessEnd::followed_op)
  bool progressed = false;  // completed an operation or checkpointed in this run
  bool restored = false;  // survived a master restart (what it was told is not stored)
  bool preempt = false;
  bool acked = false;
  bool killed = false;
  bool infrastructure = false;
  int exit_code = 0;
};

struct Trial {
  std::string request_id;
  core::SearcherTrialState searcher;
  RunState state = RunState::kActive;
  int64_t restarts = 0;
  int alloc = -1;  // index into allocs_, -1 if none
  std::vector<uint64_t> validated;  // lengths given to the searcher as completed
};

struct Budgets {
  int agent_losses = 3;
  int pause_cycles = 3;
  int master_restarts = 3;
  int kills = 1;
  int own_exits = 4;  // a process ends itself (exit 0) with work left
};

class Sim {
 public:
  Sim(const config::ExperimentConfig& config, const ClusterSimOptions& options,
      std::vector<std::string>* trace)
      : config_(config), options_(options), rng_(options.seed), trace_(trace) {
    if (!options.faults) budgets_.agent_losses = 0;
    if (!options.pauses) budgets_.pause_cycles = 0;
    if (!options.master_restarts) budgets_.master_restarts = 0;
    if (!options.kill) budgets_.kills = 0;
    if (!options.own_exits) budgets_.own_exits = 0;
  }

  Result<ClusterSimResult> Run() {
    DET_ASSIGN_OR_RETURN(searcher_, searcher::Searcher::Create(config_));
    exp_state_ = RunState::kActive;
    Log("create experiment");
    DET_RETURN_IF_ERROR(ProcessActions(searcher_->InitialOperations()));
    for (;;) {
      std::vector<std::pair<std::string, std::function<Status()>>> events = Enabled();
      if (events.empty()) break;
      if (++steps_ > options_.max_steps) return Broken("the run did not end");
      std::uniform_int_distribution<size_t> pick(0, events.size() - 1);
      auto& [what, apply] = events[pick(rng_)];
      Log(what);
      DET_RETURN_IF_ERROR(apply());
      DET_RETURN_IF_ERROR(CheckStep());
    }
    return Finish();
  }

 private:
  // --- the events that can happen now ---------------------------------------------------
  std::vector<std::pair<std::string, std::function<Status()>>> Enabled() {
    std::vector<std::pair<std::string, std::function<Status()>>> out;
    int placed = Placed();
    for (int a : live_) {
      Alloc& al = allocs_[a];
      std::string name = "a" + std::to_string(a) + "(t" + std::to_string(al.trial) + ")";
      switch (al.phase) {
        case Phase::kQueued:
          if (placed < options_.slots && exp_state_ == RunState::kActive) {
            out.emplace_back("place " + name, [this, a] { return Place(a); });
          }
          break;
        case Phase::kAsking:
          out.emplace_back("ask " + name, [this, a] { return Ask(a); });
          if (al.progressed && budgets_.own_exits > 0) {
            out.emplace_back("exit 0 between operations " + name, [this, a] {
              --budgets_.own_exits;
              allocs_[a].phase = Phase::kExiting;
              return Status::Ok();
            });
          }
          break;
        case Phase::kTraining:
          out.emplace_back("report " + name + " " + std::to_string(al.length),
                           [this, a] { return Report(a); });
          if (budgets_.own_exits > 0) {
            out.emplace_back("checkpoint and exit 0 mid-operation " + name, [this, a] {
              --budgets_.own_exits;
              allocs_[a].progressed = true;
              allocs_[a].phase = Phase::kExiting;
              return Status::Ok();
            });
          }
          if (al.preempt) {
            out.emplace_back("checkpoint and exit on preemption " + name, [this, a] {
              allocs_[a].acked = true;
              allocs_[a].phase = Phase::kExiting;
              return Status::Ok();
            });
          }
          break;
        case Phase::kExiting:
          out.emplace_back("exit " + name, [this, a] { return Exit(a); });
          break;
      }
      bool running = al.phase == Phase::kAsking || al.phase == Phase::kTraining;
      const Trial& t = trials_[al.trial];
      if (running && options_.faults && t.restarts < config_.max_restarts && !al.killed) {
        out.emplace_back("crash " + name, [this, a] {
          allocs_[a].exit_code = 1;
          allocs_[a].phase = Phase::kExiting;
          return Status::Ok();
        });
      }
      if (al.phase != Phase::kQueued && budgets_.agent_losses > 0) {
        out.emplace_back("lose the agent of " + name, [this, a] {
          --budgets_.agent_losses;
          allocs_[a].infrastructure = true;
          allocs_[a].exit_code = 1;
          allocs_[a].phase = Phase::kExiting;
          return Status::Ok();
        });
      }
    }
    if (exp_state_ == RunState::kActive && budgets_.pause_cycles > 0) {
      out.emplace_back("pause", [this] { return Pause(); });
    }
    if (exp_state_ == RunState::kPaused) {
      out.emplace_back("activate", [this] { return Activate(); });
    }
    if (!core::IsTerminal(exp_state_) && budgets_.master_restarts > 0) {
      out.emplace_back("restart the master", [this] { return RestartMaster(); });
    }
    if (!core::IsTerminal(exp_state_) && !core::IsStopping(exp_state_) && budgets_.kills > 0) {
      out.emplace_back("kill", [this] { return Kill(); });
    }
    return out;
  }

  int Placed() const {
    int n = 0;
    for (int a : live_) n += allocs_[a].phase != Phase::kQueued;
    return n;
  }

  Status Place(int a) {
    allocs_[a].phase = Phase::kAsking;
    return Status::Ok();
  }

  // GET .../searcher/operation, answered as the master answers it.
  Status Ask(int a) {
    Alloc& al = allocs_[a];
    Trial& t = trials_[al.trial];
    if (al.preempt) {  // the harness checks for preemption between operations
      al.acked = true;
      al.phase = Phase::kExiting;
      return Status::Ok();
    }
    core::OpAnswer answer = core::AnswerOperation(t.searcher, t.state, true);
    switch (answer.kind) {
      case core::OpAnswerKind::kTrain:
        al.phase = Phase::kTraining;
        al.followed = true;
        al.length = answer.length;
        Log("  told: train to " + std::to_string(answer.length));
        break;
      case core::OpAnswerKind::kDone:
        al.phase = Phase::kExiting;
        Log("  told: done");
        break;
      case core::OpAnswerKind::kNoneForNow:
        al.told_none = true;
        al.phase = Phase::kExiting;
        Log("  told: no operation for now");
        break;
      case core::OpAnswerKind::kWait:
        return Broken("a process with an allocation was told to wait");
    }
    return Status::Ok();
  }

  // POST .../searcher/completed_operation, as the master applies it.
  Status Report(int a) {
    Alloc& al = allocs_[a];
    Trial& t = trials_[al.trial];
    al.phase = Phase::kAsking;
    auto kind = core::CheckCompletion(t.searcher, al.trial, al.length, 1.0);
    if (!kind.ok()) {
      // Closed (or its op taken back) while it trained: refused, and the process asks again.
      Log("  refused: " + kind.status().message());
      return Status::Ok();
    }
    if (*kind == core::CompletionKind::kAlreadyStored) return Status::Ok();
    if (!t.validated.empty() && t.validated.back() >= al.length) {
      return Broken("t" + std::to_string(al.trial) + " trained to " + std::to_string(al.length) +
                    " twice (or out of order)");
    }
    t.validated.push_back(al.length);
    std::vector<Action> actions;
    if (!t.searcher.searcher_exited) {
      DET_ASSIGN_OR_RETURN(actions,
                           searcher_->ValidationCompleted(t.request_id, 1.0, al.length));
    }
    core::ApplyCompletion(&t.searcher, al.length);
    al.progressed = true;
    return ProcessActions(std::move(actions));
  }

  // The allocation's end, decided as ExperimentService::AllocationEnded decides it.
  Status Exit(int a) {
    Alloc al = allocs_[a];
    Remove(a);
    Trial& t = trials_[al.trial];
    t.alloc = -1;
    core::ProcessEnd end{al.exit_code, al.killed, al.acked, al.infrastructure,
                         al.told_none || al.restored};
    // The master keeps these only in memory: a restored allocation's are lost (its restored
    // flag then reads as told none, which runs pending work again anyway).
    end.followed_op = al.followed && !al.restored;
    end.progressed = al.progressed && !al.restored;
    core::ExitOutcome outcome = core::InterpretExit(t.state, t.restarts, config_.max_restarts,
                                                    core::ExitFacts(end, t.searcher));
    Log("  " + outcome.reason);
    t.restarts = outcome.restarts;
    std::vector<Action> actions;
    switch (outcome.decision) {
      case core::ExitDecision::kComplete:
        DET_RETURN_IF_ERROR(SetState(al.trial, RunState::kCompleted));
        SearcherExit(al.trial, std::nullopt, &actions);
        break;
      case core::ExitDecision::kRestart:
      case core::ExitDecision::kRescheduleFree:
        if (exp_state_ == RunState::kActive && t.state == RunState::kActive) Request(al.trial);
        break;
      case core::ExitDecision::kError:
        DET_RETURN_IF_ERROR(SetState(al.trial, RunState::kError));
        SearcherExit(al.trial, searcher::ExitedReason::kErrored, &actions);
        break;
      case core::ExitDecision::kTerminal: {
        RunState final_state = core::TerminalFor(t.state);
        DET_RETURN_IF_ERROR(SetState(al.trial, final_state));
        SearcherExit(al.trial,
                     final_state == RunState::kCanceled
                         ? std::optional<searcher::ExitedReason>(
                               searcher::ExitedReason::kUserCanceled)
                         : std::nullopt,
                     &actions);
        break;
      }
      case core::ExitDecision::kIdle:
        break;
    }
    return ProcessActions(std::move(actions));
  }

  core::TrialPresence PresenceOf(const Trial& t) const {
    if (t.alloc < 0) return core::TrialPresence::kNone;
    return allocs_[t.alloc].phase == Phase::kQueued ? core::TrialPresence::kQueued
                                                    : core::TrialPresence::kRunning;
  }

  // Every trial follows the experiment to `to` as the master moves it
  // (core::MoveWithExperiment, through ExperimentService::StageEnding and ResumeTrials).
  Status MoveTrials(RunState to, std::vector<Action>* actions, bool* moved) {
    for (size_t i = 0; i < trials_.size(); ++i) {
      Trial& t = trials_[i];
      core::TrialMove m = core::MoveWithExperiment(to, t.state, PresenceOf(t));
      if (m.to) {
        *moved = true;
        DET_RETURN_IF_ERROR(SetState(static_cast<int>(i), *m.to));
      }
      if (m.drop_queued) {
        Remove(t.alloc);  // never started: it ends without an exit to interpret
        t.alloc = -1;
      }
      if (m.stop_process) allocs_[t.alloc].preempt = true;
      if (m.kill_process) {
        Alloc& al = allocs_[t.alloc];
        al.killed = true;
        al.exit_code = 137;
        al.phase = Phase::kExiting;
      }
      if (m.tell_searcher_canceled) {
        SearcherExit(static_cast<int>(i), searcher::ExitedReason::kUserCanceled, actions);
      }
      if (m.request_process) Request(static_cast<int>(i));
    }
    return Status::Ok();
  }

  Status Pause() {
    --budgets_.pause_cycles;
    exp_state_ = RunState::kPaused;
    std::vector<Action> none;
    bool moved = false;
    return MoveTrials(RunState::kPaused, &none, &moved);
  }

  Status Activate() {
    exp_state_ = RunState::kActive;
    std::vector<Action> none;
    bool moved = false;
    DET_RETURN_IF_ERROR(MoveTrials(RunState::kActive, &none, &moved));
    return MaybeFinish();
  }

  Status Kill() {
    --budgets_.kills;
    killed_ = true;
    exp_state_ = RunState::kStoppingKilled;
    return EndTrials();
  }

  // Every trial not yet stopping follows the experiment, and so do the ones the searcher
  // creates meanwhile (a canceled trial's exit may make it create another), as the master's
  // ExperimentService::MoveEveryTrial does.
  Status EndTrials() {
    for (bool moved = true; moved;) {
      moved = false;
      std::vector<Action> actions;
      DET_RETURN_IF_ERROR(MoveTrials(exp_state_, &actions, &moved));
      DET_RETURN_IF_ERROR(ProcessActions(std::move(actions)));
    }
    return Status::Ok();
  }

  // kill -9 of the master, then a start from what it stored: the searcher from its snapshot,
  // the trials' searcher fields from theirs; processes go on and are adopted, and what they
  // were told is forgotten.
  Status RestartMaster() {
    --budgets_.master_restarts;
    std::string text = searcher_->Snapshot().dump();
    DET_ASSIGN_OR_RETURN(searcher_,
                         searcher::Searcher::Restore(config_, nlohmann::json::parse(text)));
    for (Trial& t : trials_) {
      t.searcher = core::SearcherTrialState::FromJson(
          nlohmann::json::parse(t.searcher.ToJson().dump()));
    }
    for (int a : live_) {
      if (allocs_[a].phase != Phase::kQueued) allocs_[a].restored = true;
    }
    return Status::Ok();
  }

  // --- the master's side: searcher actions, trial states ----------------------------------
  Status ProcessActions(std::vector<Action> actions) {
    std::deque<Action> queue(std::make_move_iterator(actions.begin()),
                             std::make_move_iterator(actions.end()));
    std::set<int> touched;
    while (!queue.empty()) {
      Action action = std::move(queue.front());
      queue.pop_front();
      if (auto* c = std::get_if<searcher::CreateAction>(&action)) {
        int index = static_cast<int>(trials_.size());
        Trial t;
        t.request_id = c->request_id;
        t.state = exp_state_ == RunState::kPaused ? RunState::kPaused : RunState::kActive;
        trials_.push_back(std::move(t));
        by_request_[c->request_id] = index;
        Log("  -> create t" + std::to_string(index));
        touched.insert(index);
        for (Action& more : searcher_->TrialCreated(c->request_id)) queue.push_back(more);
      } else if (auto* v = std::get_if<searcher::ValidateAfterAction>(&action)) {
        int index = by_request_.at(v->request_id);
        trials_[index].searcher.ops.push_back(v->length);
        Log("  -> t" + std::to_string(index) + " validate after " + std::to_string(v->length));
        touched.insert(index);
      } else if (auto* cl = std::get_if<searcher::CloseAction>(&action)) {
        int index = by_request_.at(cl->request_id);
        Trial& t = trials_[index];
        Log("  -> close t" + std::to_string(index));
        core::CloseEffect effect = core::ApplyClose(&t.searcher, t.state, t.alloc >= 0);
        if (effect == core::CloseEffect::kStopProcess) {
          allocs_[t.alloc].preempt = true;  // asked to checkpoint and stop
        } else if (effect == core::CloseEffect::kCompleteNow) {
          DET_RETURN_IF_ERROR(SetState(index, RunState::kCompleted));
          std::vector<Action> more;
          SearcherExit(index, std::nullopt, &more);
          for (Action& m : more) queue.push_back(m);
        }
      } else if (auto* s = std::get_if<searcher::ShutdownAction>(&action)) {
        Log("  -> shutdown");
        shutdown_ = core::SearcherShutdown{s->cancel, s->failure};
      }
    }
    for (int index : touched) {
      Trial& t = trials_[index];
      if (core::NeedsProcess(exp_state_, t.state, t.alloc >= 0, t.searcher)) Request(index);
    }
    if (core::IsStopping(exp_state_) && !ending_) {
      ending_ = true;
      Status st = EndTrials();
      ending_ = false;
      DET_RETURN_IF_ERROR(st);
    }
    return MaybeFinish();
  }

  void SearcherExit(int index, std::optional<searcher::ExitedReason> reason,
                    std::vector<Action>* actions) {
    Trial& t = trials_[index];
    if (t.searcher.searcher_exited) return;
    t.searcher.searcher_exited = true;
    if (reason) {
      for (Action& a : searcher_->TrialExitedEarly(t.request_id, *reason)) actions->push_back(a);
    }
    for (Action& a : searcher_->TrialExited(t.request_id)) actions->push_back(a);
  }

  Status MaybeFinish() {
    if (core::IsTerminal(exp_state_)) return Status::Ok();
    core::ExperimentTrialsSummary summary;
    for (const Trial& t : trials_) {
      if (!core::IsTerminal(t.state) || t.alloc >= 0) summary.live++;
      summary.any_completed = summary.any_completed || t.state == RunState::kCompleted;
      summary.any_errored = summary.any_errored || t.state == RunState::kError;
    }
    std::optional<RunState> end = core::ExperimentEndState(exp_state_, summary, false, shutdown_);
    if (!end) return Status::Ok();
    if (!core::ExperimentTransitionAllowed(exp_state_, *end)) {
      return Broken(std::string("experiment ") + std::string(core::RunStateName(exp_state_)) +
                    " -> " + std::string(core::RunStateName(*end)));
    }
    Log("  experiment " + std::string(core::RunStateName(*end)));
    exp_state_ = *end;
    return Status::Ok();
  }

  Status SetState(int index, RunState to) {
    Trial& t = trials_[index];
    if (t.state == to) return Status::Ok();
    if (!core::TrialTransitionAllowed(t.state, to)) {
      return Broken("t" + std::to_string(index) + " moved " +
                    std::string(core::RunStateName(t.state)) + " -> " +
                    std::string(core::RunStateName(to)));
    }
    Log("  t" + std::to_string(index) + " " + std::string(core::RunStateName(to)));
    t.state = to;
    return Status::Ok();
  }

  void Request(int index) {
    int a = static_cast<int>(allocs_.size());
    allocs_.push_back(Alloc{});
    allocs_[a].trial = index;
    live_.push_back(a);
    trials_[index].alloc = a;
    Log("  t" + std::to_string(index) + " queued as a" + std::to_string(a));
  }

  void Remove(int a) { live_.erase(std::find(live_.begin(), live_.end(), a)); }

  // --- invariants ------------------------------------------------------------------------
  Status CheckStep() {
    if (Placed() > options_.slots) return Broken("more slots held than the agent has");
    std::set<int> with_alloc;
    for (int a : live_) {
      int trial = allocs_[a].trial;
      if (!with_alloc.insert(trial).second) {
        return Broken("t" + std::to_string(trial) + " has two allocations");
      }
      if (trials_[trial].alloc != a) return Broken("a" + std::to_string(a) + " is orphaned");
    }
    for (size_t i = 0; i < trials_.size(); ++i) {
      const Trial& t = trials_[i];
      if (t.alloc >= 0 && !with_alloc.count(static_cast<int>(i))) {
        return Broken("t" + std::to_string(i) + " points at an allocation that ended");
      }
      if (core::IsTerminal(t.state) && t.alloc >= 0 &&
          allocs_[t.alloc].phase == Phase::kQueued) {
        return Broken("t" + std::to_string(i) + " is terminal with a queued allocation");
      }
    }
    return Status::Ok();
  }

  Result<ClusterSimResult> Finish() {
    if (!live_.empty()) return Broken("allocations left at the end");
    for (size_t i = 0; i < trials_.size(); ++i) {
      const Trial& t = trials_[i];
      if (!core::IsTerminal(t.state)) {
        return Broken("t" + std::to_string(i) + " left " +
                      std::string(core::RunStateName(t.state)) + " with nothing to run it" +
                      (t.searcher.ops.empty() ? "" : " (an operation pending: lost)"));
      }
      if (!killed_ && !t.searcher.ops.empty()) {
        return Broken("t" + std::to_string(i) + " ended with the operation to " +
                      std::to_string(t.searcher.ops.front()) + " never run (lost)");
      }
    }
    if (!core::IsTerminal(exp_state_)) {
      return Broken("the experiment is left " + std::string(core::RunStateName(exp_state_)));
    }
    ClusterSimResult result;
    for (const Trial& t : trials_) {
      std::string key;
      for (uint64_t l : t.validated) key += (key.empty() ? "" : " ") + std::to_string(l);
      result.shapes[key]++;
    }
    result.killed = killed_;
    result.steps = steps_;
    if (!killed_) {
      searcher::SimulateOptions o;
      o.metric = searcher::SimulatedMetric::kConstant;
      DET_ASSIGN_OR_RETURN(searcher::SimulateResult offline, searcher::Simulate(config_, o));
      if (offline.Shapes() != result.shapes) {
        return Broken("final lengths " + ShapesText(result.shapes) +
                      " differ from the offline simulation's " + ShapesText(offline.Shapes()));
      }
      if (exp_state_ != RunState::kCompleted) {
        return Broken("the experiment ended " + std::string(core::RunStateName(exp_state_)));
      }
    }
    return result;
  }

  static std::string ShapesText(const std::map<std::string, int64_t>& shapes) {
    std::string out = "{";
    for (const auto& [k, n] : shapes) {
      out += (out.size() > 1 ? ", " : "") + std::to_string(n) + " x [" + k + "]";
    }
    return out + "}";
  }

  Status Broken(const std::string& what) {
    return Internal("seed " + std::to_string(options_.seed) + ", step " +
                    std::to_string(steps_) + ": " + what);
  }

  void Log(const std::string& line) {
    if (trace_ != nullptr) trace_->push_back(line);
  }

  const config::ExperimentConfig& config_;
  const ClusterSimOptions& options_;
  std::mt19937_64 rng_;
  std::vector<std::string>* trace_;
  Budgets budgets_;
  std::unique_ptr<searcher::Searcher> searcher_;
  RunState exp_state_ = RunState::kActive;
  std::optional<core::SearcherShutdown> shutdown_;
  bool killed_ = false;
  bool ending_ = false;  // inside EndTrials
  int64_t steps_ = 0;
  std::vector<Trial> trials_;
  std::map<std::string, int> by_request_;
  std::vector<Alloc> allocs_;  // every allocation made; live_ lists those not ended
  std::vector<int> live_;
};

}  // namespace

Result<ClusterSimResult> RunClusterSim(const config::ExperimentConfig& config,
                                       const ClusterSimOptions& options,
                                       std::vector<std::string>* trace) {
  Sim sim(config, options, trace);
  return sim.Run();
}

}  // namespace det::master::sim
