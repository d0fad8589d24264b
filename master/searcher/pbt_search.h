#pragma once
// PbtMethod: population-based training (Determined's removed `pbt`, reference §3.2). Pure, not
// thread-safe.
//
// Rules (smaller metric is better inside; larger-is-better metrics are negated):
//  1. InitialOperations creates population_size trials; every trial (children too) gets
//     ValidateAfter(LPR) at TrialCreated, where LPR = length_per_round. A trial's lengths count
//     from its own start: after n completed rounds it is asked for LPR * (n + 1).
//  2. A validation records the trial's metric for the round. When population_size metrics are
//     in, a round ends: rounds += 1; if rounds >= num_rounds every live trial is Closed (in
//     request-id order) and the search is over.
//  3. Otherwise k = int(truncate_fraction * population_size); trials are sorted by (metric
//     ascending, request id bytes ascending); the worst k are Closed; for each of the best k,
//     best first, a child is created with explore(parent hparams) and parent_request_id = the
//     parent (it starts from the parent's latest checkpoint); every trial in the first
//     size - k positions (the best k included: they continue AND spawn, quirk 8, kept as in
//     Determined) gets its next ValidateAfter, or, if it has exited, re-enters the next round
//     at once with the worst metric.
//  4. An early exit of a trial that owes a validation counts as that validation with the worst
//     metric; a trial that already reported this round is only marked. Rounds completed only by
//     such re-entries run immediately (a loop, so a population of exited trials finishes).
//  5. explore(old), per name in byte-wise order: if UnitInterval() < resample_probability the
//     value is sampled afresh; else dec = UnitInterval() < 0.5 (drawn for every type) and
//     mult = dec ? 1 - pf : 1 + pf; int -> floor(v*mult) if dec else ceil(v*mult), clamped to
//     [minval, maxval]; double -> clamp(v*mult, minval, maxval); log -> clamp(v*mult,
//     base^minval, base^maxval); const, categorical and nested groups are kept.
//  6. Progress = (round results recorded + partial units of owed rounds / LPR) /
//     (population_size * num_rounds).

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "master/config/experiment_config.h"
#include "master/searcher/nprand.h"
#include "master/searcher/search_method.h"

namespace det::master::searcher {

// Rule 5 above; exposed for tests.
nlohmann::json PbtExplore(const config::Hyperparameters& space, const nlohmann::json& old,
                          double resample_probability, double perturb_factor, NpRand& rng);

class PbtMethod : public SearchMethod {
 public:
  PbtMethod(int64_t population_size, int64_t num_rounds, uint64_t length_per_round,
            double truncate_fraction, double resample_probability, double perturb_factor,
            bool smaller_is_better);

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
    return std::make_unique<PbtMethod>(*this);
  }

 private:
  struct Trial {
    nlohmann::json hparams;
    int64_t rounds_done = 0;
    bool awaiting = false;
    bool exited = false;
    bool closed = false;
  };

  void Record(const std::string& id, double metric);
  void Await(const std::string& id, Trial& t);
  void RunRounds(SearchContext& ctx, std::vector<Action>* actions);

  int64_t population_size_;
  int64_t num_rounds_;
  uint64_t length_per_round_;
  double truncate_fraction_;
  double resample_probability_;
  double perturb_factor_;
  bool smaller_is_better_;

  std::map<std::string, Trial> trials_;
  std::map<std::string, double> metrics_;    // this round's results
  std::map<std::string, int64_t> awaiting_;  // trials owing a validation -> rounds done (derived)
  int64_t rounds_ = 0;
  int64_t results_ = 0;  // results recorded over all rounds
  bool done_ = false;
};

}  // namespace det::master::searcher
