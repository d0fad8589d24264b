#pragma once
// ClusterSim: one experiment on a simulated cluster, every event's order chosen by a seed.
//
// It runs the real searcher (master/searcher) and the real trial decisions the master makes
// through master/core (trial_searcher.h: what a process is told, whether a completion applies,
// what an exit means; exit_policy.h; lifecycle.h), with fake slots, fake processes and no clock.
// At each step it lists what could happen next (a queued allocation is placed, a process asks
// for its operation, reports one, exits, crashes, loses its agent; a user pauses, activates or
// kills the experiment; the master restarts from what it stored) and draws one with
// std::mt19937_64(seed). Invariants are checked after every step and at the end; the first one
// broken stops the run with the trace that led there. docs/simulation.md lists them.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/config/experiment_config.h"

namespace det::master::sim {

struct ClusterSimOptions {
  uint64_t seed = 1;
  int slots = 2;           // one agent with this many slots; each trial takes one
  bool faults = true;      // processes crash (within max_restarts) and agents are lost
  bool pauses = true;      // the user pauses and activates the experiment
  bool master_restarts = true;  // the master restarts from its stored state
  bool kill = false;       // the user may kill the experiment (final lengths then unchecked)
  bool own_exits = true;   // a process that got somewhere ends itself (exit 0), work left
  int64_t max_steps = 200'000;
};

struct ClusterSimResult {
  // Per trial, the lengths it validated, as SimulateResult::Shapes(): "10 30" -> count.
  std::map<std::string, int64_t> shapes;
  bool killed = false;
  int64_t steps = 0;
  std::vector<std::string> trace;  // every event, in order
};

// Runs to the end. An error is a broken invariant (or a searcher error), its message naming
// the invariant and the step; `trace` (when given) holds the events up to it either way.
Result<ClusterSimResult> RunClusterSim(const config::ExperimentConfig& config,
                                       const ClusterSimOptions& options,
                                       std::vector<std::string>* trace = nullptr);

}  // namespace det::master::sim
