#pragma once
// The metrics table's columns as every reader selects them, and the row they make.

#include <nlohmann/json.hpp>

#include "master/store/sqlite/statement.h"
#include "master/store/store.h"

namespace det::master::store {

inline constexpr const char* kMetricColumns =
    "id, trial_id, trial_run_id, total_batches, metric_group, metrics, report_time, archived";

// Reads a row selected with kMetricColumns from column `first` on (a join may select several);
// unparsable metrics JSON reads as null.
inline MetricRow ReadMetricRowAt(const Statement& s, int first) {
  MetricRow m;
  m.id = s.Int(first);
  m.trial_id = s.Int(first + 1);
  m.trial_run_id = s.Int(first + 2);
  m.total_batches = s.Int(first + 3);
  m.group = s.Text(first + 4);
  m.metrics = nlohmann::json::parse(s.Text(first + 5), nullptr, /*allow_exceptions=*/false);
  if (m.metrics.is_discarded()) m.metrics = nlohmann::json();
  m.report_time = s.Int(first + 6);
  m.archived = s.Int(first + 7) != 0;
  return m;
}

// The row selected first (a plain function, so Statement::Collect can take it).
inline MetricRow ReadMetricRow(const Statement& s) { return ReadMetricRowAt(s, 0); }

}  // namespace det::master::store
