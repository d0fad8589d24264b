#pragma once
// DecisionWrites: the rows one decision of the master changes (a searcher's batch of actions, a
// scheduling pass, an allocation's exit), applied by Store::ApplyDecision in one transaction so
// a crash leaves either all of them or none. Each write names the fields it sets; nothing is
// read back and rewritten (the runtime holds what it needs).

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "master/store/store.h"

namespace det::master::store {

// The lifecycle fields of an existing trial row; others (metrics, runner state) are untouched.
struct TrialRunWrite {
  int64_t trial_id = 0;
  std::optional<std::string> state;  // unchanged when unset
  int64_t run_id = 0;
  int64_t restarts = 0;
  std::optional<int64_t> end_time;  // unchanged when unset
  bool clear_end_time = false;      // `det e continue`: the trial runs again
  std::optional<int64_t> run_queued_at = std::nullopt;  // set when it queues a new run
};

struct ExperimentStateWrite {
  int64_t id = 0;
  std::string state;
  std::optional<int64_t> end_time;
};

struct ExperimentProgressWrite {
  int64_t id = 0;
  double progress = 0;
};

// A trial's metadata (POST /api/v1/trials/{id}/metadata), replacing what was there.
struct TrialMetadataWrite {
  int64_t trial_id = 0;
  nlohmann::json metadata;
};

// The searcher metric a trial reported with its last completed operation.
struct TrialSearcherMetricWrite {
  int64_t trial_id = 0;
  double metric = 0;
};

// What a trial's harness says it is doing (POST /api/v1/trials/{id}/runner/metadata).
struct TrialRunnerStateWrite {
  int64_t trial_id = 0;
  std::string runner_state;
};

// An experiment's editable columns; each unset one is left as it is.
struct ExperimentMetaWrite {
  int64_t id = 0;
  std::optional<nlohmann::json> config;
  std::optional<std::string> notes;
  std::optional<bool> archived;
};

struct DecisionWrites {
  // Trials the searcher created; the store assigns their ids, in order.
  std::vector<TrialRow> new_trials;
  std::vector<TrialRunWrite> trials;
  // Upserts, after the new trials. A pending allocation has no row: it is written when placed
  // (a restore queues an active trial without an open allocation again).
  std::vector<AllocationRow> allocations;
  std::optional<ExperimentStateWrite> experiment_state;
  std::optional<ExperimentProgressWrite> experiment_progress;
  std::vector<TaskLogRow> logs;  // of existing trials
  std::vector<TrialMetadataWrite> trial_metadata;
  std::vector<TrialSearcherMetricWrite> searcher_metrics;
  std::vector<TrialRunnerStateWrite> runner_states;
  std::optional<ExperimentMetaWrite> experiment_meta;
  // Webhook deliveries the decision causes (an experiment's state change), queued with it.
  std::vector<WebhookEventRow> webhook_events;

  bool empty() const {
    return new_trials.empty() && trials.empty() && allocations.empty() && !experiment_state &&
           !experiment_progress && logs.empty() && trial_metadata.empty() &&
           searcher_metrics.empty() && runner_states.empty() && !experiment_meta &&
           webhook_events.empty();
  }
};

}  // namespace det::master::store
