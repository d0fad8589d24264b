#pragma once
// The metrics table's columns as every reader selects them, and the row they make.

#include <nlohmann/json.hpp>

#include "master/store/sqlite/statement.h"
#include "master/store/store.h"

namespace det::master::store {

inline constexpr const char* kMetricColumns =
    "id, trial_id, trial_run_id, total_batches, metric_group, metrics, report_time, archived";

// Reads a row selected with kMetricColumns; unparsable metrics JSON reads as null.
inline MetricRow ReadMetricRow(const Statement& s) {
  MetricRow m;
  m.id = s.Int(0);
  m.trial_id = s.Int(1);
  m.trial_run_id = s.Int(2);
  m.total_batches = s.Int(3);
  m.group = s.Text(4);
  m.metrics = nlohmann::json::parse(s.Text(5), nullptr, /*allow_exceptions=*/false);
  if (m.metrics.is_discarded()) m.metrics = nlohmann::json();
  m.report_time = s.Int(6);
  m.archived = s.Int(7) != 0;
  return m;
}

}  // namespace det::master::store
