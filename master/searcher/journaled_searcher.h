#pragma once
// JournaledSearcher: a Searcher that records every event it is given (in call order, before
// passing it on) so the master can persist a few bytes per decision instead of a full snapshot:
// the searcher is deterministic, so replaying the recorded events on a searcher restored from
// an earlier snapshot rebuilds exactly the state (RNG included) the live one reached. Pure, not
// thread-safe.
//
// Rules:
//  1. Every call that can change state is recorded, whatever its result (a call that fails part
//     way replays the same way): InitialOperations ["i"], TrialCreated ["c", id],
//     ValidationCompleted ["v", id, metric, length], ValidationMetricsReported ["m", id,
//     metrics], TrialExitedEarly ["e", id, reason], TrialExited ["x", id], SetTrialProgress
//     ["p", id, units]. Progress and Snapshot are not events.
//  2. TakeEvents hands over the events recorded since the last call and forgets them.
//  3. Replay applies events to a searcher, discarding the actions they produce (the master
//     persisted what those actions did); a malformed event is kInvalidArgument.

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "master/searcher/searcher.h"

namespace det::master::searcher {

class JournaledSearcher : public Searcher {
 public:
  explicit JournaledSearcher(std::unique_ptr<Searcher> inner) : inner_(std::move(inner)) {}

  static Status Replay(Searcher& searcher, const std::vector<nlohmann::json>& events);

  std::vector<nlohmann::json> TakeEvents() { return std::exchange(events_, {}); }
  bool HasEvents() const { return !events_.empty(); }

  std::vector<Action> InitialOperations() override;
  std::vector<Action> TrialCreated(const std::string& request_id) override;
  Result<std::vector<Action>> ValidationCompleted(const std::string& request_id, double metric,
                                                  uint64_t length) override;
  Result<std::vector<Action>> ValidationMetricsReported(const std::string& request_id,
                                                        const nlohmann::json& metrics) override;
  std::vector<Action> TrialExitedEarly(const std::string& request_id, ExitedReason reason) override;
  std::vector<Action> TrialExited(const std::string& request_id) override;
  void SetTrialProgress(const std::string& request_id, double units) override;
  double Progress() const override { return inner_->Progress(); }
  nlohmann::json Snapshot() const override { return inner_->Snapshot(); }
  // With the events not yet taken.
  std::unique_ptr<Searcher> Clone() const override;
  // The searcher's state without the events (what a full snapshot holds).
  std::unique_ptr<Searcher> CloneState() const { return inner_->Clone(); }

 private:
  std::unique_ptr<Searcher> inner_;
  std::vector<nlohmann::json> events_;
};

}  // namespace det::master::searcher
