#pragma once
// Rung and bracket arithmetic shared by the ASHA, tournament and SHA searchers
// (reference/determined-search-and-scheduling.md §2.3, §2.4, §3.1). Pure functions; Go integer
// truncation is written out as static_cast (truncate toward zero).

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace det::master::searcher {

// units_k = max(uint64(max_length / divisor^(R-1-k)), 1) for k = 0..R-1 (ascending).
// E.g. (3, 900, 3) -> 100, 300, 900; (4, 10, 2) -> 1, 2, 5, 10.
std::vector<uint64_t> MakeRungUnits(int num_rungs, double max_length, double divisor);

// floor(log_divisor(x)) + 1, computed exactly: the largest k with divisor^k <= x, plus one.
// NOTE: Determined truncates ln(x)/ln(d) in floating point, which undercounts at exact powers
// (243 with divisor 3 gives 5 here, 4 + 1 there); see docs/searchers.md, quirk 2.
int LogRungLimit(double x, double divisor);

// min(max_rungs, LogRungLimit(max_length), LogRungLimit(max_trials)) (at least 1).
int AshaMaxRungs(int max_rungs, double max_length, int64_t max_trials, double divisor);

// The rung counts of a mode, ascending: aggressive [mr]; standard [(mr-1)/2+1 .. mr];
// conservative [1 .. mr]. Unknown mode -> kInvalidArgument.
Result<std::vector<int>> ModeRungCounts(const std::string& mode, int max_rungs);

// Trials per bracket: w_i = d^(r_i-1)/r_i; n_i = max(int(w_i/sum(w) * max_trials), 1); bracket 0
// gets max_trials - sum(n) more when positive. (Determined's rule; may sum above max_trials.)
std::vector<int64_t> BracketMaxTrials(int64_t max_trials, double divisor,
                                      const std::vector<int>& rungs);

// Our fix for quirk 3 (adaptive_asha only): hands out `trials` in bracket order without
// exceeding max_trials in total and drops brackets left with none. Sums <= max_trials are
// returned unchanged.
std::vector<int64_t> CapBracketTrials(std::vector<int64_t> trials, int64_t max_trials);

// Concurrency per bracket: mct 0 -> every bracket max(n_last, int(divisor)); otherwise
// m = max(mct, #brackets) split evenly, the first m % #brackets brackets getting one more.
std::vector<int64_t> BracketMaxConcurrentTrials(int64_t max_concurrent_trials, double divisor,
                                                const std::vector<int64_t>& max_trials);

// The brackets of adaptive_asha (§2.4 steps 1-4 with CapBracketTrials): rung counts from
// `bracket_rungs` or from the mode over AshaMaxRungs, sorted descending, with their trials and
// concurrency. `max_units` is max_length (operations) or max_time (0.38).
struct AshaBracket {
  int num_rungs = 0;
  int64_t max_trials = 0;
  int64_t max_concurrent_trials = 0;
};
Result<std::vector<AshaBracket>> MakeAshaBrackets(const std::string& mode, int max_rungs,
                                                  const std::vector<int>& bracket_rungs,
                                                  double max_units, int64_t max_trials,
                                                  int64_t max_concurrent_trials, double divisor);

// Inserts into an ascending list before any equal values (ties favour the newcomer) and
// returns the index.
size_t InsertMetric(std::vector<double>* sorted, double metric);

// Initial creates of one ASHA: min(mct, max_trials) when mct > 0, else
// clamp(int(d^(R-1)), 1, max_trials).
int64_t AshaInitialTrials(int64_t max_concurrent_trials, int64_t max_trials, int num_rungs,
                          double divisor);

}  // namespace det::master::searcher
