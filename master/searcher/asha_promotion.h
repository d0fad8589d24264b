#pragma once
// AshaPromotionMethod: promotion-based asynchronous successive halving, the default
// adaptive_asha / async_halving of the operations era (`stop_once: false`; reference §2.5).
// Pure, not thread-safe.
//
// Rules (smaller metric is better inside; larger-is-better metrics are negated):
//  1. Rung k trains to units_k = max(int(max_length / d^(R-1-k)), 1) in total (the cumulative
//     bookkeeping of Determined sends ValidateAfter(next - cur) increments, which with absolute
//     lengths are exactly these totals).
//  2. InitialOperations creates min(mct, max_trials) trials (mct 0: clamp(int(d^(R-1)), 1,
//     max_trials)); each enters rung 0 and gets ValidateAfter(units_0) at TrialCreated.
//  3. A validation at rung r < R-1: old = int(len/d), insert AFTER equal metrics, new =
//     int((len+1)/d). If the newcomer's index < new it is promoted; else if new != old and the
//     entry at position `old` is not promoted yet, that entry is promoted. A promoted trial moves
//     to rung r+1 and gets ValidateAfter(units_{r+1}); a promoted trial that already exited is
//     treated at once as finishing rung r+1 with the worst metric.
//  4. A validation at the top rung records the metric and Closes the trial.
//  5. After a validation that added no training, one trial is created while
//     (trials - invalid) < max_trials.
//  6. Once |rung 0| == max_trials, rungs are walked bottom-up, stopping at the first rung with
//     outstanding trials; every unpromoted, unclosed trial of the rungs passed is Closed (a
//     rung is closed out once, as nothing can enter it afterwards).
//  7. InvalidHP / InitInvalidHP: the trial is Closed, its metrics leave every rung, it no longer
//     counts against max_trials and a replacement is created. Any other early exit of a trial
//     that owes a validation is treated as that validation with the worst metric. A trial that
//     exits while waiting for a promotion (it owes nothing) is only marked: if it is promoted
//     later, rule 3's recursion applies. (Determined inserted a second, worst entry for it.)
//  8. Progress: each counted trial is worth 1/max_trials: half when it reports rung 0 (or
//     finishes), half when it finishes (closed or exited). Invalid trials do not count.
//
// Cost: an event is O(log n) in the trials of a rung (RungRanking; an entry of rung r is
// promoted exactly when its trial's rung is above r, so no flag is stored per entry) plus one
// vector index (search-wide trial handle -> this method's handle); closing out a rung and
// snapshots sort a rung once.

#include <cstdint>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "master/searcher/rung_ranking.h"
#include "master/searcher/search_method.h"

namespace det::master::searcher {

class AshaPromotionMethod : public SearchMethod {
 public:
  AshaPromotionMethod(int num_rungs, uint64_t max_length, double divisor, int64_t max_trials,
                      int64_t max_concurrent_trials, bool smaller_is_better);

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
    return std::make_unique<AshaPromotionMethod>(*this);
  }

  const std::vector<uint64_t>& rung_units() const { return units_; }

 private:
  struct Rung {
    explicit Rung(double divisor)
        : ranking(divisor, RungRanking::Ties::kNewcomerLast, RungRanking::Split::kFloor) {}
    RungRanking ranking;      // ascending by metric; split at floor(n / divisor)
    int64_t outstanding = 0;  // trials that owe this rung a validation
    bool closed_out = false;
  };
  struct Trial {
    TrialHandle trial = kNoTrial;  // search-wide handle (its request id: ctx.ids)
    int rung = 0;
    bool awaiting = false;  // owes a validation at `rung`
    bool exited = false;    // exited early (or its process ended)
    bool closed = false;    // closed by the searcher or finished
    bool invalid = false;
    bool reached = false;  // reported rung 0 (or finished)
    bool counted_done = false;
  };

  void CreateTrial(SearchContext& ctx, std::vector<Action>* actions);
  void Promote(SearchContext& ctx, uint32_t trial, double metric, std::vector<Action>* actions);
  // Inserts `trial` into rung `rung`; returns the trial promoted by it, if any.
  std::optional<uint32_t> Promotions(int rung, uint32_t trial, double metric);
  void CloseOut(const RequestIdIndex& ids, std::vector<Action>* actions);
  // This method's handle of the search-wide `trial`, or kNoTrial.
  uint32_t Local(TrialHandle trial) const;
  Trial* Find(TrialHandle trial);
  void Finish(Trial& t);
  void Reach(Trial& t);

  std::vector<uint64_t> units_;
  double divisor_;
  int64_t max_trials_;
  int64_t max_concurrent_trials_;
  bool smaller_is_better_;

  std::vector<Rung> rungs_;
  // Creation order; handle = index. A deque: references stay valid while trials are created.
  std::deque<Trial> trials_;
  std::vector<uint32_t> local_;  // search-wide trial handle -> handle here, or kNoTrial
  int64_t invalid_ = 0;
  int64_t reached_ = 0;   // valid trials that reported rung 0 or finished
  int64_t finished_ = 0;  // valid trials closed or exited
};

}  // namespace det::master::searcher
