#pragma once
// The trials and checkpoints tables' columns as readers select them, and the rows they make
// (shared by the single-trial reads and the page read, sqlite_store_trial_page.cc).

#include <nlohmann/json.hpp>
#include <string>

#include "master/store/sqlite/statement.h"
#include "master/store/store.h"

namespace det::master::store {

inline nlohmann::json ParseJsonOrNull(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? nlohmann::json() : j;
}

// Every column of a trial row, each prefixed with "t." (for reads that join other tables).
inline constexpr const char* kTrialColumnsOfT =
    "t.id, t.experiment_id, t.request_id, t.seed, t.hparams, t.state, t.start_time, t.end_time, "
    "t.restarts, t.run_id, t.total_batches, t.runner_state, t.searcher_metric, t.task_id, "
    "t.metadata, t.warm_start_checkpoint_uuid, t.run_queued_at";
inline constexpr int kTrialColumnCount = 17;

// Reads a trial selected with kTrialColumnsOfT (or the same columns unprefixed) from column
// `first` on.
inline TrialRow ReadTrialRow(const Statement& s, int first = 0) {
  TrialRow r;
  r.id = s.Int(first + 0);
  r.experiment_id = s.Int(first + 1);
  r.request_id = s.Text(first + 2);
  r.seed = s.Int(first + 3);
  r.hparams = ParseJsonOrNull(s.Text(first + 4));
  r.state = s.Text(first + 5);
  r.start_time = s.Int(first + 6);
  r.end_time = s.OptInt(first + 7);
  r.restarts = s.Int(first + 8);
  r.run_id = s.Int(first + 9);
  r.total_batches = s.Int(first + 10);
  r.runner_state = s.Text(first + 11);
  r.searcher_metric = s.OptDouble(first + 12);
  r.task_id = s.Text(first + 13);
  r.metadata = ParseJsonOrNull(s.Text(first + 14));
  r.warm_start_checkpoint_uuid = s.Text(first + 15);
  r.run_queued_at = s.Int(first + 16);
  return r;
}

inline constexpr const char* kCheckpointColumns =
    "uuid, task_id, allocation_id, trial_id, report_time, state, resources, metadata, "
    "steps_completed, size";

inline CheckpointRow ReadCheckpointRow(const Statement& s) {
  CheckpointRow r;
  r.uuid = s.Text(0);
  r.task_id = s.Text(1);
  r.allocation_id = s.Text(2);
  r.trial_id = s.Int(3);
  r.report_time = s.Int(4);
  r.state = s.Text(5);
  r.resources = ParseJsonOrNull(s.Text(6));
  r.metadata = ParseJsonOrNull(s.Text(7));
  r.steps_completed = s.Int(8);
  r.size = s.Int(9);
  return r;
}

}  // namespace det::master::store
