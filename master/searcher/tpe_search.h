#pragma once
// TPE search (`searcher: {name: tpe}`): the Tree-structured Parzen Estimator of Bergstra et al.
// (2011), univariate, with Optuna's TPESampler defaults and field names. Pure, not thread-safe;
// the RNG is MethodSearcher's.
//
// Rules:
//  1. Initial creates: min(max_trials, max_concurrent_trials) (all when it is 0); every
//     TrialExited creates the next while fewer than max_trials are created. An invalid-hp early
//     exit is replaced (it does not count toward max_trials), as in random search.
//  2. Each trial gets ValidateAfter(max_length) and is closed when that validation completes;
//     its metric (negated when smaller_is_better is false) is its loss.
//  3. While fewer than n_startup_trials trials have a loss, a trial's hyperparameters are drawn
//     exactly as random search draws them (same RNG use). After that, the trials with a loss are
//     split by loss: the best gamma(n) = min(ceil(0.1 n), 25) are "below", the rest "above"
//     (with constant_liar, running trials join "above" as the worst). For each hyperparameter,
//     in the sampling order of hparam_sampling.h, n_ei_candidates values are drawn from the
//     below estimator l and the one maximising log l(x) - log g(x) is taken (g: the above
//     estimator). Errored and canceled trials are not observations.
//  4. const is its value; int values are rounded, with masses over [x - 0.5, x + 0.5]; log
//     hyperparameters are modelled in exponent space; categorical by choice index; nested
//     groups leaf by leaf.
//  5. Progress = (finished trials + running trials' units / max_length) / max_trials.
//  6. Snapshot = {created, next_seq, trials: {request id: {seq, hparams, loss, state,
//     [intermediate]}}}; restoring it and snapshotting again gives the identical text, and the
//     same suggestions.
//  7. With `stopping` (MedianStopping), trials validate every check_every and may be stopped
//     early; a stopped trial is an observation ranked below every trial that got further (by
//     its last metric), as Optuna's TPE ranks pruned trials. random search with `stopping` is
//     this method with no modelled trial (its draws are random search's).

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "master/config/experiment_config.h"
#include "master/searcher/parzen_estimator.h"
#include "master/searcher/search_method.h"

namespace det::master::searcher {

// A `stopping: {type: median, ...}` block (tpe and random searches): Optuna's MedianPruner.
// A trial validates every `check_every` units; at a length L past the warm-up, once
// n_startup_trials trials have finished, it is stopped (closed) when the best metric it has
// reported so far is worse than the median of the finished trials' metrics at L (at least
// n_min_trials of them).
struct MedianStopping {
  uint64_t check_every = 0;  // 0: no stopping (one validation, at max_length)
  int64_t n_startup_trials = 5;
  uint64_t n_warmup_steps = 0;  // in max_length's unit
  uint64_t interval_steps = 1;  // decisions only at lengths warm-up + k * interval_steps
  int64_t n_min_trials = 1;
};

struct TpeOptions {
  int64_t max_trials = 1;
  int64_t max_concurrent_trials = 16;  // 0: no limit
  uint64_t max_length = 1;
  bool smaller_is_better = true;
  int64_t n_startup_trials = 10;
  int64_t n_ei_candidates = 24;
  bool constant_liar = false;
  ParzenOptions parzen;
  MedianStopping stopping;
};

// One trial as the sampler sees it: its hyperparameters, its loss (nullopt: still running),
// and how far it got: trials are ranked by (depth, loss), smaller first, so a trial that
// reached a longer length ranks above any that stopped shorter (ASHA's rungs; Optuna ranks
// pruned trials by their last step the same way). 0 for all in a single-length search.
struct TpeObservation {
  const nlohmann::json* hparams = nullptr;
  std::optional<double> loss;
  double depth = 0;
};

// The TPE suggestion for a new trial given `observations` in creation order (rule 3's split and
// rule 4's types); running ones count only with options.constant_liar.
nlohmann::json SuggestTpe(const config::Hyperparameters& space,
                          const std::vector<TpeObservation>& observations,
                          const TpeOptions& options, NpRand& rng);

class TpeMethod : public SearchMethod {
 public:
  explicit TpeMethod(TpeOptions options) : options_(options) {}

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
    return std::make_unique<TpeMethod>(*this);
  }

 private:
  enum class State : uint8_t { kNotOurs, kRunning, kCompleted, kEnded, kReplaced, kStopped };
  struct Trial {
    State state = State::kNotOurs;
    int64_t seq = 0;  // creation order: observation weights favour the newest
    nlohmann::json hparams;
    std::optional<double> loss;               // its final (or, stopped, its last) loss
    uint64_t reached = 0;                     // the longest length it validated
    std::map<uint64_t, double> intermediate;  // losses by length, with stopping
  };

  CreateAction Next(SearchContext& ctx);
  uint64_t NextCheck(uint64_t after) const;
  bool ShouldStop(const Trial& t, uint64_t length) const;
  // Ends a running trial of ours as `to`; false when it is not one.
  bool Finish(TrialHandle trial, State to);
  Trial* Ours(TrialHandle trial);

  TpeOptions options_;
  std::vector<Trial> trials_;  // by handle
  int64_t created_ = 0;        // counted toward max_trials (replaced ones are not)
  int64_t next_seq_ = 0;
  int64_t completed_ = 0;  // trials with a loss
};

}  // namespace det::master::searcher
