#pragma once
// SyncHalvingMethod: synchronous successive halving (Determined's removed sync SHA, reference
// §3.1), one bracket of `adaptive` (budget-based) or `adaptive_simple` (trial-count-based).
// Pure, not thread-safe.
//
// Rules (smaller metric is better inside; larger-is-better metrics are negated):
//  1. Rung k has units_k (absolute length), start_k (trials that enter it) and promote_k
//     (= start_{k+1}, trials that leave it upward). InitialOperations creates start_0 trials,
//     each gets ValidateAfter(units_0) at TrialCreated. No trial is created later.
//  2. A validation at rung k < R-1: insert AFTER equal metrics; p = len + promote_k - start_k
//     (len after insertion). p <= 0 -> nothing; index < p -> promote the newcomer; else promote
//     the entry at position p-1. A promoted trial gets ValidateAfter(units_{k+1}); one that has
//     exited is treated at once as finishing rung k+1 with the worst metric.
//  3. When len == start_k, every entry from position promote_k onward is Closed.
//  4. At the top rung the trial is Closed.
//  5. An early exit of a trial that owes a validation is that validation with the worst metric;
//     a trial waiting for its rung to fill is only marked (rule 2's recursion applies later).
//  6. Progress = units trained (per trial, capped at its current target) / expected units
//     (units_0*start_0 + sum_k>0 (units_k - units_{k-1})*start_k).
//
// Rung setup for `adaptive` (SyncHalvingRungsForBudget): c = d^(R-1-k), units_k =
// max(int(L/c), 1), start_k = max(int(c), 1); expected as above; mult = budget/expected;
// start_k = int(mult*start_k); for k > 0: units_k = max(units_k, units_{k-1}), start_k =
// max(min(start_k, start_{k-1}), 1), promote_{k-1} = start_k. Rung 0 is not floored at 1.
// For `adaptive_simple` (SyncHalvingRungsForTrials): units_k = max(int(L/d^(R-1-k)), 1) raised
// to >= units_{k-1}; start_k = max(int(n/d^k), 1); promote_{k-1} = start_k.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "master/searcher/search_method.h"

namespace det::master::searcher {

struct SyncRung {
  uint64_t units = 0;
  int64_t start = 0;
  int64_t promote = 0;  // 0 at the top rung
};

std::vector<SyncRung> SyncHalvingRungsForBudget(int num_rungs, uint64_t max_length, uint64_t budget,
                                                double divisor);
std::vector<SyncRung> SyncHalvingRungsForTrials(int num_rungs, uint64_t max_length, int64_t trials,
                                                double divisor);

class SyncHalvingMethod : public SearchMethod {
 public:
  SyncHalvingMethod(std::vector<SyncRung> rungs, bool smaller_is_better);

  std::vector<Action> InitialOperations(SearchContext& ctx) override;
  std::vector<Action> TrialCreated(SearchContext& ctx, TrialHandle trial) override;
  Result<std::vector<Action>> ValidationCompleted(SearchContext& ctx, TrialHandle trial,
                                                  double metric, uint64_t length) override;
  std::vector<Action> TrialExitedEarly(SearchContext& ctx, TrialHandle trial,
                                       ExitedReason reason) override;
  std::vector<Action> TrialExited(SearchContext& ctx, TrialHandle trial) override;
  double Progress(const TrialUnits& units) const override;
  nlohmann::json Snapshot(const RequestIdIndex& ids) const override;
  Status Restore(const nlohmann::json& snapshot, const RequestIdIndex& ids) override;
  std::unique_ptr<SearchMethod> Clone() const override {
    return std::make_unique<SyncHalvingMethod>(*this);
  }

  const std::vector<SyncRung>& rungs() const { return rungs_; }

 private:
  struct Entry {
    std::string id;
    double metric = 0;
  };
  struct Trial {
    int rung = 0;
    bool awaiting = false;
    bool exited = false;
    bool closed = false;
  };

  void Report(const std::string& id, double metric, std::vector<Action>* actions);

  std::vector<SyncRung> rungs_;
  bool smaller_is_better_;
  double expected_units_ = 0;
  std::vector<std::vector<Entry>> entries_;
  std::map<std::string, Trial> trials_;
};

}  // namespace det::master::searcher
