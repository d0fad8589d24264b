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

#include "master/core/experiment.h"
#include "master/core/lifecycle.h"
#include "master/core/states.h"
#include "master/searcher/searcher.h"
#include "master/searcher/simulate.h"

namespace det::master::sim {

namespace {

using core::RunState;

// A fake process of one allocation.
enum class Phase {
  kQueued,    // waiting for a slot
  kAsking,    // started (or between operations): asks for its next one
  kTraining,  // training to `length`
  kExiting,   // decided to exit (or was killed / lost): its exit is still to arrive
};

struct Alloc {
  int exp = -1;
  int trial = -1;
  Phase phase = Phase::kQueued;
  uint64_t length = 0;
  bool told_none = false;
  bool followed = false;    // told to train (core::ProcessEnd::followed_op)
  bool progressed = false;  // completed an operation or checkpointed in this run
  bool restored = false;    // survived a master restart (what it was told is not stored)
  bool preempt = false;
  bool acked = false;
  bool killed = false;
  bool infrastructure = false;
  int exit_code = 0;
};

// What the cluster has seen of a trial, kept apart from the experiment's own record so that
// the two can be compared.
struct Seen {
  std::string request_id;
  RunState state = RunState::kActive;  // as the decisions' moves told it
  int alloc = -1;                      // index into allocs_, -1 if none
  std::vector<uint64_t> validated;     // lengths the experiment accepted as completed
};

// One experiment: the master's core::Experiment (the type under test) and what its writes and
// effects told the cluster.
struct Exp {
  const config::ExperimentConfig* config = nullptr;
  std::optional<core::Experiment> core;
  RunState seen_state = RunState::kPaused;  // as its writes said
  bool killed = false;
  int pause_cycles = 3;
  int kills = 1;
  std::vector<Seen> seen;  // per trial, in creation order
  std::map<std::string, int> by_request;
};

struct Budgets {
  int agent_losses = 3;
  int master_restarts = 3;
  int own_exits = 4;  // a process ends itself (exit 0) with work left
};

class Sim {
 public:
  Sim(const std::vector<config::ExperimentConfig>& configs, const ClusterSimOptions& options,
      std::vector<std::string>* trace)
      : options_(options), rng_(options.seed), trace_(trace) {
    if (!options.faults) budgets_.agent_losses = 0;
    if (!options.master_restarts) budgets_.master_restarts = 0;
    if (!options.own_exits) budgets_.own_exits = 0;
    for (const config::ExperimentConfig& c : configs) {
      Exp& e = exps_.emplace_back();
      e.config = &c;
      if (!options.pauses) e.pause_cycles = 0;
      if (!options.kill) e.kills = 0;
    }
  }

  Result<ClusterSimResult> Run() {
    for (size_t i = 0; i < exps_.size(); ++i) {
      Exp& e = exps_[i];
      DET_ASSIGN_OR_RETURN(std::unique_ptr<searcher::Searcher> search,
                           searcher::Searcher::Create(*e.config));
      e.core.emplace(std::move(search), Rules(e));
      Log("create experiment e" + std::to_string(i));
      DET_RETURN_IF_ERROR(Decide(static_cast<int>(i), core::Activate{}));
    }
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
  static core::ExperimentRules Rules(const Exp& e) {
    core::ExperimentRules rules;
    rules.max_restarts = e.config->max_restarts;
    return rules;
  }

  std::string TrialName(int exp, int trial) const {
    return (exps_.size() > 1 ? "e" + std::to_string(exp) + "." : "") + "t" + std::to_string(trial);
  }
  std::string ExpName(int exp) const { return exps_.size() > 1 ? " e" + std::to_string(exp) : ""; }

  // --- the events that can happen now ---------------------------------------------------
  std::vector<std::pair<std::string, std::function<Status()>>> Enabled() {
    std::vector<std::pair<std::string, std::function<Status()>>> out;
    int placed = Placed();
    for (int a : live_) {
      Alloc& al = allocs_[a];
      const Exp& x = exps_[al.exp];
      std::string name = "a" + std::to_string(a) + "(" + TrialName(al.exp, al.trial) + ")";
      switch (al.phase) {
        case Phase::kQueued:
          if (placed < options_.slots && x.core->state() == RunState::kActive) {
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
      const core::Trial& t = x.core->trials()[al.trial];
      if (running && options_.faults && t.restarts < x.config->max_restarts && !al.killed) {
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
    bool any_live = false;
    for (size_t i = 0; i < exps_.size(); ++i) {
      int e = static_cast<int>(i);
      Exp& x = exps_[i];
      RunState state = x.core->state();
      any_live = any_live || !core::IsTerminal(state);
      if (state == RunState::kActive && x.pause_cycles > 0) {
        out.emplace_back("pause" + ExpName(e), [this, e] {
          --exps_[e].pause_cycles;
          return Decide(e, core::Pause{});
        });
      }
      if (state == RunState::kPaused) {
        out.emplace_back("activate" + ExpName(e),
                         [this, e] { return Decide(e, core::Activate{}); });
      }
      if (!core::IsTerminal(state) && !core::IsStopping(state) && x.kills > 0) {
        out.emplace_back("kill" + ExpName(e), [this, e] {
          --exps_[e].kills;
          exps_[e].killed = true;
          return Decide(e, core::Stop{RunState::kStoppingKilled});
        });
      }
    }
    if (any_live && budgets_.master_restarts > 0) {
      out.emplace_back("restart the master", [this] { return RestartMaster(); });
    }
    return out;
  }

  int Placed() const {
    int n = 0;
    for (int a : live_) n += allocs_[a].phase != Phase::kQueued;
    return n;
  }

  const std::string& Rid(const Alloc& al) const { return exps_[al.exp].seen[al.trial].request_id; }

  Status Place(int a) {
    allocs_[a].phase = Phase::kAsking;
    return Decide(allocs_[a].exp, core::Placed{Rid(allocs_[a])});
  }

  // GET .../searcher/operation, answered as the experiment answers it.
  Status Ask(int a) {
    Alloc& al = allocs_[a];
    if (al.preempt) {  // the harness checks for preemption between operations
      al.acked = true;
      al.phase = Phase::kExiting;
      return Status::Ok();
    }
    DET_ASSIGN_OR_RETURN(core::OpAnswer answer, exps_[al.exp].core->Answer(Rid(al)));
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

  // POST .../searcher/completed_operation.
  Status Report(int a) {
    Alloc& al = allocs_[a];
    al.phase = Phase::kAsking;
    Exp& x = exps_[al.exp];
    core::CompleteOperation report{Rid(al), al.trial, al.length, 1.0};
    Result<core::Decision> d = x.core->Decide(report);
    if (!d.ok() && d.status().code() != StatusCode::kInternal) {
      // Closed (or its op taken back) while it trained: refused, and the process asks again.
      Log("  refused: " + d.status().message());
      return Status::Ok();
    }
    if (!d.ok()) return Broken(d.status().message());
    if (d->completion == core::CompletionKind::kApply) {
      Seen& s = x.seen[al.trial];
      if (!s.validated.empty() && s.validated.back() >= al.length) {
        return Broken(TrialName(al.exp, al.trial) + " trained to " + std::to_string(al.length) +
                      " twice (or out of order)");
      }
      s.validated.push_back(al.length);
      al.progressed = true;
    }
    return Apply(al.exp, *d);
  }

  // The allocation's end, with what the master knows of its process.
  Status Exit(int a) {
    Alloc al = allocs_[a];
    Remove(a);
    exps_[al.exp].seen[al.trial].alloc = -1;
    core::ProcessEnd end{al.exit_code, al.killed, al.acked, al.infrastructure,
                         al.told_none || al.restored};
    // The master keeps these only in memory: a restored allocation's are lost (its restored
    // flag then reads as told none, which runs pending work again anyway).
    end.followed_op = al.followed && !al.restored;
    end.progressed = al.progressed && !al.restored;
    Result<core::Decision> d = exps_[al.exp].core->Decide(core::ProcessExited{Rid(al), end});
    if (!d.ok()) return Broken(d.status().message());
    Log("  " + d->exit->reason);
    return Apply(al.exp, *d);
  }

  // kill -9 of the master, then a start from what it stored: each searcher from its snapshot
  // text, the trials' states, restarts and searcher fields from theirs; processes go on and
  // are adopted, and what they were told is forgotten.
  Status RestartMaster() {
    --budgets_.master_restarts;
    std::vector<std::vector<core::Trial>> stored(exps_.size());
    for (size_t i = 0; i < exps_.size(); ++i) {
      for (const core::Trial& t : exps_[i].core->trials()) {
        core::Trial r;
        r.request_id = t.request_id;
        r.state = t.state;
        r.restarts = t.restarts;
        r.searcher =
            core::SearcherTrialState::FromJson(nlohmann::json::parse(t.searcher.ToJson().dump()));
        stored[i].push_back(std::move(r));
      }
    }
    for (int a : live_) {
      Alloc& al = allocs_[a];
      stored[al.exp][al.trial].presence =
          al.phase == Phase::kQueued ? core::TrialPresence::kQueued : core::TrialPresence::kRunning;
      if (al.phase != Phase::kQueued) al.restored = true;
    }
    for (size_t i = 0; i < exps_.size(); ++i) {
      Exp& x = exps_[i];
      std::string text = x.core->searcher().Snapshot().dump();
      DET_ASSIGN_OR_RETURN(std::unique_ptr<searcher::Searcher> search,
                           searcher::Searcher::Restore(*x.config, nlohmann::json::parse(text)));
      RunState state = x.core->state();
      bool initialized = x.core->initialized();
      std::optional<core::SearcherShutdown> shutdown = x.core->shutdown();
      x.core.emplace(std::move(search), Rules(x), state, initialized, shutdown,
                     std::move(stored[i]));
    }
    return Status::Ok();
  }

  // --- the decisions, and the cluster carrying them out ---------------------------------
  Status Decide(int exp, const core::ExperimentEvent& event) {
    Result<core::Decision> d = exps_[exp].core->Decide(event);
    if (!d.ok()) return Broken(d.status().message());
    return Apply(exp, *d);
  }

  // Checks the decision against what the cluster saw before it, then carries out its effects.
  Status Apply(int exp, const core::Decision& d) {
    Exp& x = exps_[exp];
    for (const searcher::CreateAction& c : d.created) {
      int index = static_cast<int>(x.seen.size());
      const core::Trial& t = x.core->trials()[index];
      if (t.request_id != c.request_id) return Broken("trials are not kept in creation order");
      Seen s;
      s.request_id = c.request_id;
      // Its state when created: the first move's `from`, else the state it still has.
      s.state = t.state;
      for (const core::TrialStateChange& m : d.moves) {
        if (m.request_id == c.request_id) {
          s.state = m.from;
          break;
        }
      }
      x.seen.push_back(std::move(s));
      x.by_request[c.request_id] = index;
      Log("  -> create " + TrialName(exp, index));
    }
    for (const core::TrialStateChange& m : d.moves) {
      int index = x.by_request.at(m.request_id);
      Seen& s = x.seen[index];
      if (s.state != m.from || !core::TrialTransitionAllowed(m.from, m.to)) {
        return Broken(TrialName(exp, index) + " moved " + Name(m.from) + " -> " + Name(m.to) +
                      " (it was " + Name(s.state) + ")");
      }
      s.state = m.to;
      Log("  " + TrialName(exp, index) + " " + Name(m.to));
    }
    if (d.experiment_to) {
      if (!core::ExperimentTransitionAllowed(x.seen_state, *d.experiment_to)) {
        return Broken("experiment" + ExpName(exp) + " " + Name(x.seen_state) + " -> " +
                      Name(*d.experiment_to));
      }
      x.seen_state = *d.experiment_to;
      Log("  experiment" + ExpName(exp) + " " + Name(*d.experiment_to));
    }
    for (const core::ProcessEffect& e : d.processes) {
      int index = x.by_request.at(e.request_id);
      Seen& s = x.seen[index];
      std::string t = TrialName(exp, index);
      switch (e.kind) {
        case core::ProcessEffect::Kind::kRequest: {
          if (s.alloc >= 0) return Broken(t + " is given a second allocation");
          int a = static_cast<int>(allocs_.size());
          allocs_.push_back(Alloc{});
          allocs_[a].exp = exp;
          allocs_[a].trial = index;
          live_.push_back(a);
          s.alloc = a;
          Log("  " + t + " queued as a" + std::to_string(a));
          break;
        }
        case core::ProcessEffect::Kind::kDrop:
          if (s.alloc < 0 || allocs_[s.alloc].phase != Phase::kQueued) {
            return Broken(t + "'s allocation is dropped, but it is not queued");
          }
          Remove(s.alloc);  // never started: it ends without an exit to interpret
          s.alloc = -1;
          break;
        case core::ProcessEffect::Kind::kStop:
          if (s.alloc < 0) return Broken(t + " is asked to stop without an allocation");
          allocs_[s.alloc].preempt = true;  // asked to checkpoint and stop
          break;
        case core::ProcessEffect::Kind::kKill: {
          if (s.alloc < 0) return Broken(t + " is killed without an allocation");
          Alloc& al = allocs_[s.alloc];
          al.killed = true;
          al.exit_code = 137;
          al.phase = Phase::kExiting;
          break;
        }
      }
    }
    return Status::Ok();
  }

  void Remove(int a) { live_.erase(std::find(live_.begin(), live_.end(), a)); }

  static std::string Name(RunState s) { return std::string(core::RunStateName(s)); }

  // --- invariants ------------------------------------------------------------------------
  Status CheckStep() {
    if (Placed() > options_.slots) return Broken("more slots held than the agent has");
    std::set<std::pair<int, int>> with_alloc;
    for (int a : live_) {
      const Alloc& al = allocs_[a];
      if (!with_alloc.insert({al.exp, al.trial}).second) {
        return Broken(TrialName(al.exp, al.trial) + " has two allocations");
      }
      if (exps_[al.exp].seen[al.trial].alloc != a) {
        return Broken("a" + std::to_string(a) + " is orphaned");
      }
    }
    for (size_t e = 0; e < exps_.size(); ++e) {
      const Exp& x = exps_[e];
      const auto& trials = x.core->trials();
      if (trials.size() != x.seen.size()) return Broken("a trial was made without being written");
      for (size_t i = 0; i < trials.size(); ++i) {
        const core::Trial& t = trials[i];
        const Seen& s = x.seen[i];
        std::string name = TrialName(static_cast<int>(e), static_cast<int>(i));
        if (s.alloc >= 0 && !with_alloc.count({static_cast<int>(e), static_cast<int>(i)})) {
          return Broken(name + " points at an allocation that ended");
        }
        if (t.state != s.state) {
          return Broken(name + " is " + Name(t.state) + " but its writes said " + Name(s.state));
        }
        core::TrialPresence presence = core::TrialPresence::kNone;
        if (s.alloc >= 0) {
          presence = allocs_[s.alloc].phase == Phase::kQueued ? core::TrialPresence::kQueued
                                                              : core::TrialPresence::kRunning;
        }
        if (t.presence != presence) {
          return Broken(name +
                        ": the experiment's idea of its allocation differs from the "
                        "cluster's");
        }
        if (core::IsTerminal(t.state) && presence == core::TrialPresence::kQueued) {
          return Broken(name + " is terminal with a queued allocation");
        }
      }
      if (x.seen_state != x.core->state()) {
        return Broken("experiment" + ExpName(static_cast<int>(e)) + " moved without a write");
      }
    }
    return Status::Ok();
  }

  Result<ClusterSimResult> Finish() {
    if (!live_.empty()) return Broken("allocations left at the end");
    ClusterSimResult result;
    result.steps = steps_;
    for (size_t e = 0; e < exps_.size(); ++e) {
      const Exp& x = exps_[e];
      const auto& trials = x.core->trials();
      for (size_t i = 0; i < trials.size(); ++i) {
        const core::Trial& t = trials[i];
        std::string name = TrialName(static_cast<int>(e), static_cast<int>(i));
        if (!core::IsTerminal(t.state)) {
          return Broken(name + " left " + Name(t.state) + " with nothing to run it" +
                        (t.searcher.ops.empty() ? "" : " (an operation pending: lost)"));
        }
        if (!x.killed && !t.searcher.ops.empty()) {
          return Broken(name + " ended with the operation to " +
                        std::to_string(t.searcher.ops.front()) + " never run (lost)");
        }
      }
      RunState state = x.core->state();
      if (!core::IsTerminal(state)) {
        return Broken("experiment" + ExpName(static_cast<int>(e)) + " is left " + Name(state));
      }
      ClusterSimResult::Outcome outcome;
      for (const Seen& s : x.seen) {
        std::string key;
        for (uint64_t l : s.validated) key += (key.empty() ? "" : " ") + std::to_string(l);
        outcome.shapes[key]++;
      }
      outcome.killed = x.killed;
      if (!x.killed) {
        searcher::SimulateOptions o;
        o.metric = searcher::SimulatedMetric::kConstant;
        DET_ASSIGN_OR_RETURN(searcher::SimulateResult offline, searcher::Simulate(*x.config, o));
        if (offline.Shapes() != outcome.shapes) {
          return Broken("final lengths" + ExpName(static_cast<int>(e)) + " " +
                        ShapesText(outcome.shapes) + " differ from the offline simulation's " +
                        ShapesText(offline.Shapes()));
        }
        if (state != RunState::kCompleted) {
          return Broken("experiment" + ExpName(static_cast<int>(e)) + " ended " + Name(state));
        }
      }
      result.experiments.push_back(std::move(outcome));
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
    return Internal("seed " + std::to_string(options_.seed) + ", step " + std::to_string(steps_) +
                    ": " + what);
  }

  void Log(const std::string& line) {
    if (trace_ != nullptr) trace_->push_back(line);
  }

  const ClusterSimOptions& options_;
  std::mt19937_64 rng_;
  std::vector<std::string>* trace_;
  Budgets budgets_;
  std::deque<Exp> exps_;  // a deque: an experiment's address stays put
  int64_t steps_ = 0;
  std::vector<Alloc> allocs_;  // every allocation made; live_ lists those not ended
  std::vector<int> live_;
};

}  // namespace

Result<ClusterSimResult> RunClusterSim(const std::vector<config::ExperimentConfig>& configs,
                                       const ClusterSimOptions& options,
                                       std::vector<std::string>* trace) {
  if (configs.empty()) return InvalidArgument("configs: at least one experiment is needed");
  Sim sim(configs, options, trace);
  return sim.Run();
}

}  // namespace det::master::sim
