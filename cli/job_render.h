#pragma once
// `det job list`: the scheduler type of a pool and the job-queue table, as Determined's
// `cli/job.py` renders them.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/table.h"
#include "common/status.h"

namespace det::cli {

// Whether the pool named `pool` (the default compute pool when nullopt) uses the priority
// scheduler, from a `GET /api/v1/resource-pools` answer. NotFound `Pool <name> not found`
// (`Pool None not found` without a name and no default pool).
Result<bool> IsPriorityPool(const nlohmann::json& pools_response,
                            const std::optional<std::string>& pool);

// The jobs of `GET /api/v1/job-queues-v2` answers: each `{full: Job}` or `{limited: ...}`
// unwrapped; `limited` jobs get `"limited": true` so the table can hide their fields.
nlohmann::json UnpackJobs(const nlohmann::json& wrapped_jobs);

// `#, ID, Type, Job Name, Priority|Weight, Submitted, Slots (acquired/needed), State, User`.
std::vector<std::string> JobListHeaders(bool is_priority);
std::vector<TableRow> JobListRows(const nlohmann::json& jobs, bool is_priority);

// An RFC 3339 timestamp as Python prints an aware UTC datetime: `2022-01-01 00:01:00+00:00`,
// with `.ffffff` when the microseconds are not zero. The text unchanged when unparsable.
std::string FormatPythonDatetime(const std::string& rfc3339);

}  // namespace det::cli
