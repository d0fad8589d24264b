#pragma once
// AshaStoppingMethod: stop-based asynchronous successive halving (reference §2.3). Runs in one
// of two modes. Operations mode (`stop_once: true` with max_length): trials follow
// ValidateAfter ops, one rung at a time. Time mode (0.38: `time_metric` + `max_time`): trials
// train on their own and report metrics dicts through ValidationMetricsReported; rung lengths
// come from max_time and the position from the time metric. Pure, not thread-safe.
//
// Rules (smaller metric is better inside; larger-is-better metrics are negated):
//  1. units_k = max(uint64(max_length_or_time / d^(R-1-k)), 1).
//  2. Initial creates as promotion ASHA: min(mct, max_trials), or clamp(int(d^(R-1)), 1,
//     max_trials) when mct is 0. Operations mode: each trial gets ValidateAfter(units_0).
//  3. A report (value v at length t) walks r from the trial's rung to R-1: the trial's rung
//     becomes r; if t < units_r, stop walking (operations mode: ValidateAfter(units_r)); insert v
//     into rung r BEFORE equal values (ties favour the newcomer); at the top rung -> Stop; else
//     keep = max(int(len/d), 1) with len after insertion; index >= keep -> Stop; else go on (one
//     report can pass several rungs).
//  4. Stop is a Close action. A trial reaching the top rung is stopped too (quirk 7: it has
//     nothing left to train; the Stop keeps it from training past the maximum).
//  5. Every trial frees its slot exactly once: when stopped, when it exits early, or when its
//     process ends unstopped; a freed slot creates a trial while (trials - invalid) <
//     max_trials. (Determined 0.38 created only after a Stop, so a trial that ended on its own
//     before the top rung was never replaced and the search ran short.)
//  6. InvalidHP / InitInvalidHP: Close, remove its metrics from rungs 0..rung, stop counting it,
//     create a replacement. Other early exits: insert the worst metric into its current rung.
//     Reports of stopped or exited trials are ignored (a stopped trial never resumes).
//  7. Progress as promotion ASHA: each counted trial is worth half when it reports rung 0 or
//     finishes and half when it finishes, over max_trials.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "master/searcher/search_method.h"

namespace det::master::searcher {

class AshaStoppingMethod : public SearchMethod {
 public:
  enum class Mode { kOperations, kTime };

  // `max_units` is max_length (operations mode) or max_time (time mode).
  AshaStoppingMethod(Mode mode, int num_rungs, double max_units, double divisor, int64_t max_trials,
                     int64_t max_concurrent_trials, bool smaller_is_better, std::string metric_name,
                     std::string time_metric);

  std::vector<Action> InitialOperations(SearchContext& ctx) override;
  std::vector<Action> TrialCreated(SearchContext& ctx, TrialHandle trial) override;
  Result<std::vector<Action>> ValidationCompleted(SearchContext& ctx, TrialHandle trial,
                                                  double metric, uint64_t length) override;
  Result<std::vector<Action>> ValidationMetricsReported(SearchContext& ctx, TrialHandle trial,
                                                        const nlohmann::json& metrics) override;
  std::vector<Action> TrialExitedEarly(SearchContext& ctx, TrialHandle trial,
                                       ExitedReason reason) override;
  std::vector<Action> TrialExited(SearchContext& ctx, TrialHandle trial) override;
  double Progress(const TrialUnits& units) const override;
  nlohmann::json Snapshot(const RequestIdIndex& ids) const override;
  Status Restore(const nlohmann::json& snapshot, const RequestIdIndex& ids) override;
  std::unique_ptr<SearchMethod> Clone() const override {
    return std::make_unique<AshaStoppingMethod>(*this);
  }

  const std::vector<uint64_t>& rung_units() const { return units_; }

 private:
  struct Entry {
    std::string id;
    double metric = 0;
  };
  struct Trial {
    int rung = 0;
    bool stopped = false;  // closed by the searcher, exited, or invalid
    bool exited = false;
    bool invalid = false;
    bool released = false;  // its slot has been given back
    bool reached = false;
    bool counted_done = false;
  };

  void CreateTrial(SearchContext& ctx, std::vector<Action>* actions);
  void Decide(SearchContext& ctx, const std::string& id, double value, uint64_t t,
              std::vector<Action>* actions);
  void Release(SearchContext& ctx, Trial& t, std::vector<Action>* actions);
  void Finish(Trial& t);
  void Reach(Trial& t);
  size_t Insert(int rung, const std::string& id, double value);

  Mode mode_;
  std::vector<uint64_t> units_;
  double divisor_;
  int64_t max_trials_;
  int64_t max_concurrent_trials_;
  bool smaller_is_better_;
  std::string metric_name_;
  std::string time_metric_;

  std::vector<std::vector<Entry>> rungs_;  // ascending by metric
  std::map<std::string, Trial> trials_;
  int64_t invalid_ = 0;
  int64_t reached_ = 0;
  int64_t finished_ = 0;
};

}  // namespace det::master::searcher
