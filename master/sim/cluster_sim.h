#pragma once
// ClusterSim: experiments sharing a simulated cluster, every event's order chosen by a seed.
//
// Each experiment is the master's own core::Experiment (master/core/experiment.h: its trials,
// its real searcher and its decision step); the simulation plays the rest of the cluster with
// fake slots, fake processes and no clock, and carries out each decision's effects. At each
// step it lists what could happen next (a queued allocation is placed, a process asks for its
// operation, reports one, exits, crashes, loses its agent; a user pauses, activates or kills an
// experiment; the master restarts from what it stored) and draws one with
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
  int slots = 2;                // one agent with this many slots; each trial takes one
  bool faults = true;           // processes crash (within max_restarts) and agents are lost
  bool pauses = true;           // the user pauses and activates the experiment
  bool master_restarts = true;  // the master restarts from its stored state
  bool kill = false;            // the user may kill each experiment (its lengths then unchecked)
  bool own_exits = true;        // a process that got somewhere ends itself (exit 0), work left
  int64_t max_steps = 200'000;
};

struct ClusterSimResult {
  struct Outcome {
    // Per trial, the lengths it validated, as SimulateResult::Shapes(): "10 30" -> count.
    std::map<std::string, int64_t> shapes;
    bool killed = false;
  };
  std::vector<Outcome> experiments;  // in the order of the configs
  int64_t steps = 0;
};

// Runs the experiments of `configs` (one or more, sharing the agent's slots; each may be paused
// and killed on its own) to the end. An error is a broken invariant (or a searcher error), its
// message naming the invariant and the step; `trace` (when given) holds the events up to it
// either way.
Result<ClusterSimResult> RunClusterSim(const std::vector<config::ExperimentConfig>& configs,
                                       const ClusterSimOptions& options,
                                       std::vector<std::string>* trace = nullptr);

}  // namespace det::master::sim
