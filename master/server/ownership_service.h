#pragma once
// OwnershipService: who owns what a request acts on, for the permission check
// (master/core/permissions.h). Experiments, trials, checkpoints and allocations resolve to
// their experiment and its owner. These links never change once made (an experiment keeps its
// owner, a trial its experiment), so found links are cached and most checks read no row.

#include <cstdint>
#include <map>
#include <string>

#include "common/status.h"
#include "common/thread_annotations.h"
#include "master/store/store.h"

namespace det::master::server {

struct Ownership {
  int64_t owner_id = 0;
  int64_t experiment_id = 0;
  int64_t trial_id = 0;  // 0 for an experiment
};

class OwnershipService {
 public:
  explicit OwnershipService(store::Store* store) : store_(store) {}

  Result<Ownership> OfExperiment(int64_t experiment_id) EXCLUDES(mu_);
  Result<Ownership> OfTrial(int64_t trial_id) EXCLUDES(mu_);
  Result<Ownership> OfCheckpoint(const std::string& uuid) EXCLUDES(mu_);
  Result<Ownership> OfAllocation(const std::string& allocation_id) EXCLUDES(mu_);

 private:
  template <typename K, typename V>
  void Remember(std::map<K, V>& cache, const K& key, const V& value) REQUIRES(mu_);

  store::Store* const store_;
  Mutex mu_;
  std::map<int64_t, int64_t> experiment_owner_ GUARDED_BY(mu_);
  std::map<int64_t, int64_t> trial_experiment_ GUARDED_BY(mu_);
  std::map<std::string, int64_t> checkpoint_trial_ GUARDED_BY(mu_);
  std::map<std::string, int64_t> allocation_trial_ GUARDED_BY(mu_);
};

}  // namespace det::master::server
