// Which checkpoints of an experiment checkpoint GC deletes: Determined's rule, as a pure
// function (no store, no clock). The master gathers the inputs, calls SelectCheckpointsToDelete
// and hands the uuids to the GC task (python -m determined.exec.gc_checkpoints).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace det::master::checkpoint_gc {

struct GcCheckpoint {
  std::string uuid;
  int64_t trial_id = 0;
  int64_t steps_completed = 0;
  // Checkpoints without a report time are not finished and never considered.
  std::optional<int64_t> report_time;
  std::string state = "COMPLETED";  // COMPLETED | PARTIALLY_DELETED | DELETED
  // The searcher metric of the validation of the same trial with
  // total_batches == steps_completed; nullopt when there is none (or it lacks the metric).
  std::optional<double> searcher_metric;
  // Tie-breaker for equal metrics / equal steps: the order checkpoints were reported (row id).
  int64_t id = 0;
  // Warm-start source of some trial, or registered in the model registry: never deleted.
  bool keep = false;
};

struct GcPolicy {
  int64_t save_experiment_best = 0;
  int64_t save_trial_best = 1;
  int64_t save_trial_latest = 1;
  bool smaller_is_better = true;
  // The experiment's checkpoint_policy (best | all | none). It decides which checkpoints a
  // trial takes, not which GC keeps; carried so callers pass the whole policy in one place.
  std::string checkpoint_policy = "best";
};

// The three ranks of one checkpoint (1-based), exposed for tests and `det` explanations.
struct GcRanks {
  std::string uuid;
  int64_t experiment_rank = 0;   // by sign*metric ascending over the experiment, nulls last
  int64_t trial_rank = 0;        // the same within the trial
  int64_t trial_order_rank = 0;  // by steps_completed descending within the trial
  bool has_metric = false;
  bool remove = false;
};

// Ranks every eligible checkpoint (report_time set, keep == false) and decides:
//   delete iff ((experiment_rank > save_experiment_best AND trial_rank > save_trial_best)
//               OR metric IS NULL) AND trial_order_rank > save_trial_latest.
// Already DELETED checkpoints take part in the ranking but are never returned.
std::vector<GcRanks> RankCheckpoints(const std::vector<GcCheckpoint>& checkpoints,
                                     const GcPolicy& policy);

// The uuids to delete, in input order.
std::vector<std::string> SelectCheckpointsToDelete(const std::vector<GcCheckpoint>& checkpoints,
                                                   const GcPolicy& policy);

// The policy of an experiment config (JSON after defaults may or may not be applied):
// checkpoint_storage.save_* (defaults 0/1/1, must be >= 0), searcher.smaller_is_better
// (default true) and checkpoint_policy (default "best").
Result<GcPolicy> PolicyFromExperimentConfig(const nlohmann::json& config);

}  // namespace det::master::checkpoint_gc
