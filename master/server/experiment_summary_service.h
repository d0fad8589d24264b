#pragma once
// ExperimentSummaryService: the experiment list's per-experiment columns that Determined's
// Experiment message carries (checkpointCount, checkpointSize, bestTrialSearcherMetric,
// bestTrialId), read for one page of experiments at a time. Holds no state of its own: every
// answer comes from the store, so it is as current as the last committed report.

#include <cstdint>
#include <map>
#include <vector>

#include "common/status.h"
#include "master/store/store.h"

namespace det::master::server {

class ExperimentSummaryService {
 public:
  explicit ExperimentSummaryService(store::Store* store) : store_(store) {}

  // The summaries of `experiment_ids` that name experiments, by experiment id.
  Result<std::map<int64_t, store::ExperimentSummaryRow>> Summaries(
      const std::vector<int64_t>& experiment_ids);

 private:
  store::Store* store_;
};

}  // namespace det::master::server
