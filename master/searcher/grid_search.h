#pragma once
// Grid search (reference §2.2). GridAxes/GridPoint build the grid; GridMethod runs it. Pure,
// not thread-safe.
//
// Rules:
//  1. One axis per leaf hyperparameter: top-level names in byte-wise order; nested groups expand
//     depth-first, also sorted; each axis carries its route (path of keys). An empty nested map
//     is one axis with the single value {}.
//  2. Axis values: int -> c = min(count, maxval - minval + 1); c == 1 -> round((min+max)/2),
//     else round(min + i*(max-min)/(c-1)) (integer product, float division, rounding half away
//     from zero). double -> c == 1 ? (min+max)/2 : min + i*(max-min)/(c-1) (no clamping).
//     log -> base^(that double value over the exponents). categorical -> vals in order.
//     const -> its value. int/double/log without `count` -> kInvalidArgument.
//  3. The grid is the cartesian product with the FIRST axis varying slowest. Trials are taken
//     from the END: the first trial created is the last grid point. Points are computed from
//     their index, so the grid is never materialised (a snapshot stores only a counter).
//  4. Initial creates: min(|grid|, max_concurrent_trials) (all when it is 0). Every TrialExited
//     creates the next point while any is left; early exits are not replaced.
//  5. Each trial gets ValidateAfter(max_length) (nothing when max_length is unset) and is
//     closed when that validation completes.
//  6. Progress = sum over created trials of (1 if closed or exited, else units/max_length)
//     divided by |grid|.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "master/config/experiment_config.h"
#include "master/searcher/search_method.h"

namespace det::master::searcher {

struct GridAxis {
  std::vector<std::string> route;
  std::vector<nlohmann::json> values;
};

Result<std::vector<GridAxis>> GridAxes(const config::Hyperparameters& hparams);
// Number of points (product of axis sizes); kInvalidArgument when over 2^53.
Result<uint64_t> GridSize(const std::vector<GridAxis>& axes);
// The point at `index` of the lexicographic product (first axis slowest), as hparams JSON.
nlohmann::json GridPoint(const std::vector<GridAxis>& axes, uint64_t index);

class GridMethod : public SearchMethod {
 public:
  // REQUIRES: axes from GridAxes, size == GridSize(axes).
  GridMethod(std::vector<GridAxis> axes, uint64_t size, std::optional<uint64_t> max_length,
             int64_t max_concurrent_trials);

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
    return std::make_unique<GridMethod>(*this);
  }

 private:
  enum class State : uint8_t { kNotOurs, kRunning, kFinished };

  CreateAction Next(SearchContext& ctx);
  void Run(TrialHandle trial);
  // Marks a grid trial finished (closed or exited); false when it is not one of the grid's.
  bool Finish(TrialHandle trial);

  std::vector<GridAxis> axes_;
  uint64_t size_;
  std::optional<uint64_t> max_length_;
  int64_t max_concurrent_trials_;
  uint64_t next_ = 0;  // points handed out so far
  // By trial handle: so an event is O(1) and Progress sums only the running trials.
  std::vector<State> state_;
  std::set<TrialHandle> running_;  // ascending: Progress adds in a fixed order
  int64_t finished_ = 0;
};

}  // namespace det::master::searcher
