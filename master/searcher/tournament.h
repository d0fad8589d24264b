#pragma once
// TournamentMethod: several searches side by side (reference §2.4 step 6). Used for
// adaptive_asha (brackets of ASHA), adaptive and adaptive_simple (brackets of synchronous SHA).
// Pure, not thread-safe.
//
// Rules:
//  1. InitialOperations concatenates the sub-searches' initial operations in bracket order.
//  2. Every Create a sub-search emits is registered (ctx.ids) and recorded in a table trial
//     handle -> bracket; every later event for that trial is routed to that bracket only
//     (unknown trials are ignored).
//  3. Progress is the mean of the sub-searches' progress (each on its own trials).
//  4. Snapshot = {brackets: [sub snapshots], owner: {request id: bracket}}.

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "master/searcher/cloned_ptr.h"
#include "master/searcher/search_method.h"

namespace det::master::searcher {

class TournamentMethod : public SearchMethod {
 public:
  explicit TournamentMethod(std::vector<std::unique_ptr<SearchMethod>> brackets);

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
    return std::make_unique<TournamentMethod>(*this);
  }

  size_t num_brackets() const { return brackets_.size(); }
  // The bracket that created `trial`, or -1.
  int BracketOf(TrialHandle trial) const;

 private:
  static constexpr uint16_t kNoBracket = 0xffff;

  std::vector<Action> Own(SearchContext& ctx, size_t bracket, std::vector<Action> actions);

  std::vector<ClonedPtr<SearchMethod>> brackets_;
  std::vector<uint16_t> owner_;  // by trial handle; kNoBracket: not created by a bracket
};

}  // namespace det::master::searcher
