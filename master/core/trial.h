#pragma once
// A trial as its experiment's decisions see it: its state, restart count, the searcher's
// bookkeeping for it and where its allocation is. Owned by core::Experiment (experiment.h);
// no ids, rows or processes: the master maps the request id to those.

#include <cstdint>
#include <string>

#include "master/core/experiment_moves.h"
#include "master/core/states.h"
#include "master/core/trial_searcher.h"

namespace det::master::core {

struct Trial {
  std::string request_id;
  RunState state = RunState::kActive;
  int64_t restarts = 0;
  SearcherTrialState searcher;
  // Set by the experiment's own decisions (a new run queues it, Placed runs it, an exit or a
  // drop ends it), so it always agrees with the effects it asked for.
  TrialPresence presence = TrialPresence::kNone;

  bool has_allocation() const { return presence != TrialPresence::kNone; }
};

}  // namespace det::master::core
