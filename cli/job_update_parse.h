#pragma once
// `det job update` / `det job update-batch`: building the `QueueControl` objects of
// `POST /api/v1/job-queues {updates: [...]}`.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace det::cli {

// The flags of `det job update JOB_ID`; exactly one of them must be set.
struct JobUpdateFlags {
  std::optional<int64_t> priority;
  std::optional<double> weight;
  std::optional<std::string> resource_pool;
  std::optional<std::string> ahead_of;
  std::optional<std::string> behind_of;
};

// {"jobId": id, "<priority|weight|resourcePool|aheadOf|behindOf>": value}; InvalidArgument
// unless exactly one flag is set.
Result<nlohmann::json> BuildJobUpdate(const std::string& job_id, const JobUpdateFlags& flags);

// Parses one `update-batch` item, `<jobID>.<operation>=<value>` with operation one of
// priority, weight, resource-pool (resource_pool), ahead-of (ahead_of), behind-of (behind_of),
// into a QueueControl object. Errors use Determined's wording and name the job.
Result<nlohmann::json> ParseBatchJobUpdate(const std::string& item);

}  // namespace det::cli
