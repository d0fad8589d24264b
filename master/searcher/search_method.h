#pragma once
// SearchMethod: the per-method half of a searcher (reference §1.1). MethodSearcher owns the RNG,
// the hyperparameter space and the bookkeeping every method shares (requests, pending
// operations, exits, cancels, failures, shutdown); a SearchMethod only decides which trials to
// create, how far each trains and when each is closed. Methods compose: a tournament routes
// events to the bracket that created the trial. Pure, not thread-safe.
//
// Conventions for every method:
//  1. A trial's first ValidateAfter is emitted from TrialCreated; later ones (promotions, PBT
//     rounds) from the event that decides them. Lengths are absolute totals of the trial.
//  2. Metrics arrive raw; a method negates them when smaller_is_better is false, so that
//     smaller is always better inside the method.
//  3. The worst metric is kWorstMetric (MaxFloat64, finite so snapshots round-trip).
//  4. TrialExited of a trial the method has neither closed nor seen exit early is handled as an
//     early exit (the trial left without reporting what it owed), so no search waits forever.
//  5. Trials are named by TrialHandle (dense, search-wide: SearchContext::ids), never by request
//     id, below MethodSearcher; request ids appear only in actions and snapshots. A method keeps
//     per-trial state in vectors by handle where an event must stay O(1) at any number of trials.

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "master/config/experiment_config.h"
#include "master/searcher/nprand.h"
#include "master/searcher/request_id_index.h"
#include "master/searcher/searcher.h"

namespace det::master::searcher {

inline constexpr double kWorstMetric = std::numeric_limits<double>::max();

// What a method may use besides its own state. All outlive every call.
struct SearchContext {
  NpRand& rng;
  const config::Hyperparameters& hparams;
  // Every trial of the search: a method registers each Create it emits (ids.Add) and gets its
  // handle; events name trials by handle, actions by ids.id(handle).
  RequestIdIndex& ids;
  // `sampler: tpe` (tpe_sampler.h): new trials' hyperparameters from a model; null: random.
  class TpeSampler* sampler = nullptr;
};

// A new trial of a method whose trials may be model-sampled (ASHA): the sampler's, or exactly
// NewCreateAction's random draw. Not registered in ctx.ids by the random path (the method does).
CreateAction NewTrialAction(SearchContext& ctx);

// Units trained so far per trial (the largest value reported or validated), by handle.
class TrialUnits {
 public:
  explicit TrialUnits(const RequestIdIndex& ids) : ids_(ids) {}
  virtual ~TrialUnits() = default;
  // nullopt until the trial's creation is reported.
  virtual std::optional<double> Of(TrialHandle trial) const = 0;
  std::optional<double> Of(std::string_view id) const { return Of(ids_.Find(id)); }

 private:
  const RequestIdIndex& ids_;
};

class SearchMethod {
 public:
  virtual ~SearchMethod() = default;

  virtual std::vector<Action> InitialOperations(SearchContext& ctx) = 0;
  virtual std::vector<Action> TrialCreated(SearchContext& ctx, TrialHandle trial) = 0;
  // REQUIRES: `length` was a pending ValidateAfter of `trial` (MethodSearcher checks it).
  virtual Result<std::vector<Action>> ValidationCompleted(SearchContext& ctx, TrialHandle trial,
                                                          double metric, uint64_t length) = 0;
  virtual Result<std::vector<Action>> ValidationMetricsReported(SearchContext& ctx,
                                                                TrialHandle trial,
                                                                const nlohmann::json& metrics) {
    return std::vector<Action>();
  }
  virtual std::vector<Action> TrialExitedEarly(SearchContext& ctx, TrialHandle trial,
                                               ExitedReason reason) = 0;
  virtual std::vector<Action> TrialExited(SearchContext& ctx, TrialHandle trial) = 0;
  // In [0, 1] (MethodSearcher clamps and maps NaN to 0).
  virtual double Progress(const TrialUnits& units) const = 0;
  // Request ids come from `ids` (snapshots name trials by request id, never by handle).
  virtual nlohmann::json Snapshot(const RequestIdIndex& ids) const = 0;
  // `ids` holds every trial the method created (restored first by MethodSearcher).
  virtual Status Restore(const nlohmann::json& snapshot, const RequestIdIndex& ids) = 0;
  // A copy of the whole state (Searcher::Clone).
  virtual std::unique_ptr<SearchMethod> Clone() const = 0;
};

}  // namespace det::master::searcher
