#pragma once
// TournamentMethod: several searches side by side (reference §2.4 step 6). Used for
// adaptive_asha (brackets of ASHA), adaptive and adaptive_simple (brackets of synchronous SHA).
// Pure, not thread-safe.
//
// Rules:
//  1. InitialOperations concatenates the sub-searches' initial operations in bracket order.
//  2. Every Create a sub-search emits is recorded in a table request id -> bracket; every later
//     event for that id is routed to that bracket only (unknown ids are ignored).
//  3. Progress is the mean of the sub-searches' progress (each on its own trials).
//  4. Snapshot = {brackets: [sub snapshots], owner: {request id: bracket}}.

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "master/searcher/search_method.h"

namespace det::master::searcher {

class TournamentMethod : public SearchMethod {
 public:
  explicit TournamentMethod(std::vector<std::unique_ptr<SearchMethod>> brackets);

  std::vector<Action> InitialOperations(SearchContext& ctx) override;
  std::vector<Action> TrialCreated(SearchContext& ctx, const std::string& id) override;
  Result<std::vector<Action>> ValidationCompleted(SearchContext& ctx, const std::string& id,
                                                  double metric, uint64_t length) override;
  Result<std::vector<Action>> ValidationMetricsReported(SearchContext& ctx, const std::string& id,
                                                        const nlohmann::json& metrics) override;
  std::vector<Action> TrialExitedEarly(SearchContext& ctx, const std::string& id,
                                       ExitedReason reason) override;
  std::vector<Action> TrialExited(SearchContext& ctx, const std::string& id) override;
  double Progress(const TrialUnits& units) const override;
  nlohmann::json Snapshot() const override;
  Status Restore(const nlohmann::json& snapshot) override;

  size_t num_brackets() const { return brackets_.size(); }
  // The bracket that created `id`, or -1.
  int BracketOf(const std::string& id) const;

 private:
  std::vector<Action> Own(size_t bracket, std::vector<Action> actions);

  std::vector<std::unique_ptr<SearchMethod>> brackets_;
  std::unordered_map<std::string, size_t> owner_;
};

}  // namespace det::master::searcher
