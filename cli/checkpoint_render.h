#pragma once
// Checkpoint tables, as Determined's `cli/checkpoint.py` renders them:
// `det experiment list-checkpoints` and the describe table of `det checkpoint describe|download`.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/table.h"

namespace det::cli {

// `Trial ID, # of Batches, State, Validation Metric, UUID, Resources, Size`.
std::vector<std::string> CheckpointListHeaders();
// One row per Checkpoint. The Validation Metric is the searcher metric (from the first
// checkpoint's `training.experimentConfig.searcher.metric`) in `validationMetrics.avgMetrics`;
// Resources lists the sorted file names one per line, Size sums them (`1.2KB`).
// `csv` prints floats as Python's str() does; the table form uses tabulate's `g` unless a row
// lacks the metric (then the column is text and Python's str() is kept too).
std::vector<TableRow> CheckpointListRows(const nlohmann::json& checkpoints, bool csv);

// `Experiment ID, Trial ID, Steps Completed, Report Time, Checkpoint UUID, Validation Metrics,
// Metadata` and the one row of a Checkpoint.
std::vector<std::string> CheckpointDescribeHeaders();
TableRow CheckpointDescribeRow(const nlohmann::json& checkpoint);

// Python's str() of a JSON number (repr of floats: `0.5`, `1.0`, `1e-05`).
std::string PythonNumberText(const nlohmann::json& value);

}  // namespace det::cli
