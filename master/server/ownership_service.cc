#include "master/server/ownership_service.h"

namespace det::master::server {
namespace {

// Beyond this many entries a cache starts over (the links are cheap to read again).
constexpr size_t kMaxCached = 1 << 20;

}  // namespace

template <typename K, typename V>
void OwnershipService::Remember(std::map<K, V>& cache, const K& key, const V& value) {
  if (cache.size() >= kMaxCached) cache.clear();
  cache[key] = value;
}

Result<Ownership> OwnershipService::OfExperiment(int64_t experiment_id) {
  {
    MutexLock lock(&mu_);
    auto it = experiment_owner_.find(experiment_id);
    if (it != experiment_owner_.end()) return Ownership{it->second, experiment_id, 0};
  }
  DET_ASSIGN_OR_RETURN(store::ExperimentRow row, store_->GetExperiment(experiment_id));
  MutexLock lock(&mu_);
  Remember(experiment_owner_, experiment_id, row.owner_id);
  return Ownership{row.owner_id, experiment_id, 0};
}

Result<Ownership> OwnershipService::OfTrial(int64_t trial_id) {
  int64_t experiment_id = 0;
  {
    MutexLock lock(&mu_);
    auto it = trial_experiment_.find(trial_id);
    if (it != trial_experiment_.end()) experiment_id = it->second;
  }
  if (experiment_id == 0) {
    DET_ASSIGN_OR_RETURN(store::TrialRow row, store_->GetTrial(trial_id));
    experiment_id = row.experiment_id;
    MutexLock lock(&mu_);
    Remember(trial_experiment_, trial_id, experiment_id);
  }
  DET_ASSIGN_OR_RETURN(Ownership o, OfExperiment(experiment_id));
  o.trial_id = trial_id;
  return o;
}

Result<Ownership> OwnershipService::OfCheckpoint(const std::string& uuid) {
  int64_t trial_id = 0;
  {
    MutexLock lock(&mu_);
    auto it = checkpoint_trial_.find(uuid);
    if (it != checkpoint_trial_.end()) trial_id = it->second;
  }
  if (trial_id == 0) {
    DET_ASSIGN_OR_RETURN(store::CheckpointRow row, store_->GetCheckpoint(uuid));
    if (row.trial_id == 0) return NotFound("checkpoint " + uuid + " has no trial");
    trial_id = row.trial_id;
    MutexLock lock(&mu_);
    Remember(checkpoint_trial_, uuid, trial_id);
  }
  return OfTrial(trial_id);
}

Result<Ownership> OwnershipService::OfAllocation(const std::string& allocation_id) {
  int64_t trial_id = 0;
  {
    MutexLock lock(&mu_);
    auto it = allocation_trial_.find(allocation_id);
    if (it != allocation_trial_.end()) trial_id = it->second;
  }
  if (trial_id == 0) {
    DET_ASSIGN_OR_RETURN(store::AllocationRow row, store_->GetAllocation(allocation_id));
    if (row.trial_id == 0) return NotFound("allocation " + allocation_id + " has no trial");
    trial_id = row.trial_id;
    MutexLock lock(&mu_);
    Remember(allocation_trial_, allocation_id, trial_id);
  }
  return OfTrial(trial_id);
}

}  // namespace det::master::server
