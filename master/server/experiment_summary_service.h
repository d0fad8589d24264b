#pragma once
// ExperimentSummaryService: the experiment list's per-experiment columns that Determined's
// Experiment message carries (checkpointCount, checkpointSize, bestTrialSearcherMetric,
// bestTrialId), read for one page of experiments at a time.
//
// The best validation scans every validation report of an experiment (0.7 s for a page of 20
// searches of 500 trials x 20 validations on the development machine), and the list polls every
// 5 s: so the summaries of finished experiments are kept for up to a minute (their reports no
// longer change; a checkpoint GC or delete shows within that minute), keyed by their end time so
// that a continued experiment is read again. Running experiments are always read afresh.

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "master/store/store.h"

namespace det::master::server {

struct ExperimentSummaryKey {
  int64_t id = 0;
  std::optional<int64_t> end_time;  // set only while the experiment is finished
};

class ExperimentSummaryService {
 public:
  ExperimentSummaryService(store::Store* store, const Clock* clock)
      : store_(store), clock_(clock) {}

  // The summaries of `experiments` that exist, by experiment id.
  Result<std::map<int64_t, store::ExperimentSummaryRow>> Summaries(
      const std::vector<ExperimentSummaryKey>& experiments);

  static constexpr int64_t kMaxAgeMicros = 60 * 1000000;
  static constexpr size_t kMaxCached = 10000;

 private:
  struct Cached {
    int64_t end_time = 0;
    int64_t read_at = 0;
    store::ExperimentSummaryRow row;
  };

  store::Store* store_;
  const Clock* clock_;
  std::mutex mu_;
  std::map<int64_t, Cached> cache_;  // finished experiments only; guarded by mu_
};

}  // namespace det::master::server
