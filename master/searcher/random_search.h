#pragma once
// RandomSearcher: the `single` and `random` search methods of Determined's operations era
// (reference/determined-search-and-scheduling.md §1.1, §2.1), including the wrapper
// bookkeeping (requests, exits, failures, cancels, shutdown). Not thread-safe.
//
// Rules, in order of precedence:
//  1. InitialOperations creates min(max_trials, max_concurrent_trials) trials (all of
//     max_trials when max_concurrent_trials is 0; exactly one for `single`). It acts once.
//  2. Each Create draws from the one RNG: hyperparameters (sorted names), 16 bytes for the
//     UUIDv4 request id, then the trial seed (Bits32 & 0x7fffffff).
//  3. TrialCreated answers ValidateAfter(max_length) (nothing when max_length is unset: the
//     trial decides its own length); the completed validation at that length answers Close.
//  4. A trial is done at its first exit report (TrialExitedEarly or TrialExited); later reports
//     count nothing. Errored counts a failure, UserCanceled a cancel. For `random`, InvalidHP
//     and InitInvalidHP give the slot back so the trial is replaced.
//  5. TrialExited creates one more trial while fewer than max_trials have been created.
//  6. Shutdown is emitted once, when every requested trial is done and none is still owed;
//     cancel / failure are set only when every requested trial was canceled / failed.
//  7. Progress = sum over created, non-replaced trials of (1 if closed or done, else
//     units / max_length clamped to [0, 1]) divided by max(max_trials, that count), so it
//     never goes down as later trials start (with all trials created it is their mean).
//
// Cost: trials are dense handles (RequestIdIndex) with counters kept as they change, so an
// event is O(1) and Progress is O(trials still running); snapshots sort by request id.

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "master/config/experiment_config.h"
#include "master/searcher/nprand.h"
#include "master/searcher/request_id_index.h"
#include "master/searcher/searcher.h"

namespace det::master::searcher {

class RandomSearcher : public Searcher {
 public:
  // REQUIRES: config.searcher.name is "single" or "random".
  explicit RandomSearcher(const config::ExperimentConfig& config);

  // Replaces this searcher's state with `snapshot` (as produced by Snapshot()).
  Status LoadSnapshot(const nlohmann::json& snapshot);

  std::vector<Action> InitialOperations() override;
  std::vector<Action> TrialCreated(const std::string& request_id) override;
  Result<std::vector<Action>> ValidationCompleted(const std::string& request_id, double metric,
                                                  uint64_t length) override;
  std::vector<Action> TrialExitedEarly(const std::string& request_id, ExitedReason reason) override;
  std::vector<Action> TrialExited(const std::string& request_id) override;
  void SetTrialProgress(const std::string& request_id, double units) override;
  double Progress() const override;
  nlohmann::json Snapshot() const override;
  std::unique_ptr<Searcher> Clone() const override {
    return std::make_unique<RandomSearcher>(*this);
  }

 private:
  struct TrialState {
    int64_t seq = 0;              // order of its Create
    bool created = false;         // TrialCreated seen
    bool closed = false;          // its validation completed and Close was emitted
    bool done = false;            // first exit report seen
    bool process_exited = false;  // TrialExited seen
    bool failed = false;
    bool canceled = false;
    bool replaced = false;  // invalid hyperparameters; a new trial takes its place
    double units = 0;
  };

  // How a trial counts in Progress (rule 7).
  enum class Count : uint8_t { kNone, kRunning, kFinished };

  CreateAction NewTrial();
  void MaybeShutdown(std::vector<Action>* actions);
  // The handle of `request_id`, or kNoTrial.
  TrialHandle Find(const std::string& request_id);
  static Count CountOf(const TrialState& t);
  // Moves trial `h` from the count `before` (taken before its state changed) to its count now.
  void Recount(TrialHandle h, Count before);
  // Rebuilds every counter from trials_ (after a restore).
  void RecountAll();

  std::string name_;
  config::Hyperparameters hparams_;
  std::optional<config::Length> max_length_;
  int64_t max_trials_;
  int64_t max_concurrent_trials_;

  NpRand rng_;
  bool initialized_ = false;
  bool shutdown_ = false;
  int64_t trials_requested_ = 0;
  int64_t created_trials_ = 0;  // counts against max_trials; replaced trials give theirs back
  RequestIdIndex ids_;
  std::vector<TrialState> trials_;  // by handle
  // Kept as trials change (rule 6 and 7 without a scan).
  int64_t done_ = 0, failures_ = 0, cancels_ = 0;
  int64_t finished_ = 0;              // counted trials that are closed or done
  std::vector<TrialHandle> running_;  // counted trials still running, in no order
  std::vector<int64_t> running_at_;   // by handle: index in running_, or -1
};

}  // namespace det::master::searcher
