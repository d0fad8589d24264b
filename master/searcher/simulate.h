#pragma once
// Simulate: runs a search without a cluster, for `det preview-search`, tests and benchmarks.
// Pure: no clock, no I/O; any randomness comes from seeds in the options.
//
// How trials behave:
//  1. Operations mode (every searcher without time_metric): actions are processed FIFO. A
//     Create creates the trial at once (TrialCreated); a ValidateAfter(L) is completed at once
//     with the trial's metric (with `order_seed` != 0 instead: pending ops are queued and the
//     next trial to finish one is drawn with std::mt19937(order_seed)); a Close exits the trial
//     (TrialExited). A trial left with no op and not closed when nothing else can happen exits
//     (counted in `idle_exits`: random/grid without max_length, never ASHA).
//  2. Time mode (adaptive_asha/async_halving with time_metric + max_time): trials run one after
//     another in creation order (new ones appended), each reporting {metric, time_metric: t} at
//     every t of `report_points` (default: every rung length max(int(max_time / d^j), 1), j >= 0,
//     ascending) until stopped, then exiting. Its `lengths` is the single t it stopped at (or its
//     last report).
//  3. Metrics are deterministic: kConstant (1.0 for every report), kTrialIndex (trial i in
//     creation order reports i + 1: later trials are worse when smaller is better), kSpread
//     (trial i reports the base-2 radical inverse of i + 1: 0.5, 0.25, 0.75, 0.125, ... spread
//     evenly, so stop-based ASHA keeps about 1/divisor per rung; the default). `metric_fn`
//     overrides them.
//  4. `outcomes` groups trials by the last length each trained to (ascending), as the
//     reference §4 outcomes {count, length}; `total_units` sums those lengths (a PBT child's
//     length counts from its own start).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "master/config/experiment_config.h"
#include "master/searcher/searcher.h"

namespace det::master::searcher {

enum class SimulatedMetric { kConstant, kTrialIndex, kSpread };

struct SimulateOptions {
  SimulatedMetric metric = SimulatedMetric::kSpread;
  // (trial index in creation order, index of this report for the trial) -> raw metric.
  std::function<double(int64_t, int64_t)> metric_fn;
  // Operations mode: when it returns a reason for (trial index, op length), the trial exits
  // early with it instead of completing that op.
  std::function<std::optional<ExitedReason>(int64_t, uint64_t)> exit_fn;
  uint32_t order_seed = 0;           // 0 = FIFO
  bool round_trip = false;           // snapshot + restore after every event, compare texts
  // Clone after every event and go on with the copy; the copy's snapshot must equal the
  // original's, and the original must not change when the copy does (Searcher::Clone).
  bool clone = false;
  bool record_progress = true;       // Progress() after every event
  std::vector<uint64_t> report_points;  // time mode; empty = rung lengths
  int64_t max_events = 50'000'000;
  std::vector<std::string>* transcript = nullptr;  // every event and action, as text
};

struct SimulatedTrial {
  std::string request_id;
  std::optional<int64_t> parent;      // index of the parent trial (PBT children)
  nlohmann::json hparams;
  std::vector<uint64_t> lengths;      // lengths validated (or reported, time mode)
  bool exited_early = false;
};

struct LengthCount {
  int64_t count = 0;
  uint64_t length = 0;
};

struct SimulateResult {
  std::vector<SimulatedTrial> trials;  // creation order
  std::vector<LengthCount> outcomes;   // by final length, ascending
  uint64_t total_units = 0;
  int64_t events = 0;                  // searcher calls made
  int64_t decisions = 0;               // actions returned
  int64_t shutdowns = 0;
  int64_t idle_exits = 0;
  std::vector<double> progress;        // after every event (when record_progress)
  std::optional<ShutdownAction> shutdown;

  // Multiset of per-trial length lists: "1000 3000" -> number of trials.
  std::map<std::string, int64_t> Shapes() const;
};

Result<SimulateResult> Simulate(const config::ExperimentConfig& config,
                                const SimulateOptions& options = SimulateOptions());

// The 0.38 arithmetic preview of adaptive_asha / async_halving (reference §4.4, no RNG, no
// metrics): per bracket, walking rungs bottom-up, cont = max(int(n/d), 1) trials continue and
// n - cont stop at the rung's length (all n at the top rung). Returns {count, length} ascending
// by length; lengths are max_time (time mode) or max_length based. Other searchers ->
// kInvalidArgument (use Simulate).
Result<std::vector<LengthCount>> PreviewAsha(const config::ExperimentConfig& config);

// Text form of an action, e.g. "validate_after <id> 300".
std::string DescribeAction(const Action& action);

}  // namespace det::master::searcher
