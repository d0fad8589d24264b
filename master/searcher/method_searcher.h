#pragma once
// MethodSearcher: the Searcher every method except single/random runs behind (reference §1.1).
// It owns the RNG and the bookkeeping shared by all methods; the SearchMethod decides. Not
// thread-safe.
//
// Rules:
//  1. InitialOperations acts once; when the method creates no trial at all, Shutdown follows
//     at once.
//  2. Every Create adds a trial record; every ValidateAfter adds a pending length to it.
//     ValidationCompleted must name a pending length (else kInvalidArgument; an unknown request
//     id is kNotFound) and consumes it, so an operation cannot be completed twice.
//  3. A trial is done at its first exit report (TrialExitedEarly or TrialExited): it owes
//     nothing more. Errored counts a failure, UserCanceled a cancel. Later reports of a done
//     trial reach the method only as the first TrialExited.
//  4. Shutdown is emitted exactly once, after the event in which the LAST requested trial's
//     process ended (TrialExited; Determined's TrialsClosed): an early-exit report alone is not
//     enough, because methods such as grid create the next trial when a process ends. cancel /
//     failure are set only when every requested trial was canceled / failed.
//  5. Units per trial only grow: max of every SetTrialProgress and completed validation length.
//  6. Progress is the method's value clamped to [0, 1] (NaN/Inf -> 0), and exactly 1 once
//     Shutdown has been emitted.
//  7. Snapshot = {version, search_method_type, rand, initialized, shutdown, trials, method};
//     restoring it and snapshotting again gives the identical JSON text.

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "master/config/experiment_config.h"
#include "master/searcher/cloned_ptr.h"
#include "master/searcher/nprand.h"
#include "master/searcher/request_id_index.h"
#include "master/searcher/search_method.h"
#include "master/searcher/searcher.h"
#include "master/searcher/tpe_sampler.h"

namespace det::master::searcher {

class MethodSearcher : public Searcher {
 public:
  MethodSearcher(const config::ExperimentConfig& config, std::unique_ptr<SearchMethod> method);

  // Replaces this searcher's state with `snapshot` (as produced by Snapshot()).
  Status LoadSnapshot(const nlohmann::json& snapshot);
  // `sampler: tpe`: the method's new trials are model-sampled (before any event or restore).
  void UseTpeSampler(TpeOptions options) { sampler_.emplace(options); }

  std::vector<Action> InitialOperations() override;
  std::vector<Action> TrialCreated(const std::string& request_id) override;
  Result<std::vector<Action>> ValidationCompleted(const std::string& request_id, double metric,
                                                  uint64_t length) override;
  Result<std::vector<Action>> ValidationMetricsReported(const std::string& request_id,
                                                        const nlohmann::json& metrics) override;
  std::vector<Action> TrialExitedEarly(const std::string& request_id, ExitedReason reason) override;
  std::vector<Action> TrialExited(const std::string& request_id) override;
  void SetTrialProgress(const std::string& request_id, double units) override;
  double Progress() const override;
  nlohmann::json Snapshot() const override;
  std::unique_ptr<Searcher> Clone() const override {
    return std::make_unique<MethodSearcher>(*this);
  }

 private:
  // 24 bytes, no heap: an event touches one record and nothing else of the trial's here.
  struct TrialRecord {
    // NaN until TrialCreated.
    double units = std::numeric_limits<double>::quiet_NaN();
    // ValidateAfter lengths not yet completed, oldest first: the first inline (a trial nearly
    // always owes one at a time), the others in more_pending_.
    uint64_t first_pending = 0;
    uint32_t pending = 0;
    bool created : 1 = false;
    bool closed : 1 = false;
    bool done : 1 = false;
    bool exited : 1 = false;
    bool failed : 1 = false;
    bool canceled : 1 = false;
  };
  static_assert(sizeof(TrialRecord) == 24);

  void AddPending(TrialHandle trial, uint64_t length);
  bool OwesValidation(TrialHandle trial, uint64_t length) const;
  // Removes the oldest pending `length` of `trial`; false when it owes none.
  bool TakePending(TrialHandle trial, uint64_t length);
  void ClearPending(TrialHandle trial);
  std::vector<uint64_t> Pending(TrialHandle trial) const;

  // Bookkeeping for actions the method returned; appends Shutdown when due.
  std::vector<Action> Record(std::vector<Action> actions);
  // The handle of a recorded trial, or kNoTrial.
  TrialHandle Known(const std::string& request_id);
  SearchContext Context() {
    return SearchContext{rng_, hparams_, ids_, sampler_ ? &*sampler_ : nullptr};
  }

  std::string name_;
  config::Hyperparameters hparams_;
  NpRand rng_;
  ClonedPtr<SearchMethod> method_;
  std::optional<TpeSampler> sampler_;  // sampler: tpe
  bool initialized_ = false;
  bool shutdown_ = false;
  int64_t exited_count_ = 0;
  // Request ids become dense handles at this boundary (one flat-table lookup per event); every
  // layer below keeps per-trial state in vectors indexed by handle. Snapshots name trials by
  // request id (JSON objects are ordered by key), so handles never reach the stored state.
  RequestIdIndex ids_;
  std::vector<TrialRecord> trials_;  // by handle
  // Pending lengths after first_pending, of the few trials that owe more than one.
  std::unordered_map<TrialHandle, std::vector<uint64_t>> more_pending_;
};

}  // namespace det::master::searcher
