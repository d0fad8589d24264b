#pragma once
// The rows most store tests start from: an experiment of the built-in admin (user 1) and a trial
// in it. Header-only, for tests.

#include <cstdint>
#include <string>

#include "master/store/store.h"

namespace det::master::store::store_test {

inline Result<int64_t> InsertTestExperiment(Store* store, const std::string& state = "ACTIVE") {
  ExperimentRow e;
  e.state = state;
  e.config = {{"name", "x"}};
  e.original_config = "name: x";
  e.owner_id = 1;
  e.job_id = "job";
  return store->InsertExperiment(e, "tgz");
}

// An active trial of `experiment_id` with the task id the master gives it.
inline TrialRow TestTrialRow(int64_t experiment_id, const std::string& request_id) {
  TrialRow t;
  t.experiment_id = experiment_id;
  t.request_id = request_id;
  t.hparams = nlohmann::json::object();
  t.state = "ACTIVE";
  t.task_id = std::to_string(experiment_id) + "." + request_id;
  return t;
}

inline Result<int64_t> InsertTestTrial(Store* store, int64_t experiment_id, int64_t run_id = 0) {
  TrialRow t;
  t.experiment_id = experiment_id;
  t.request_id = "r";
  t.hparams = nlohmann::json::object();
  t.state = "ACTIVE";
  t.run_id = run_id;
  return store->InsertTrial(t);
}

}  // namespace det::master::store::store_test
