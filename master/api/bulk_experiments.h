#pragma once
// Determined's bulk experiment actions (POST /api/v1/projects/{projectId}/experiments/kill and
// the like): which experiments a request selects. Pure: no store, no I/O.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/store/store.h"

namespace det::master::api {

enum class BulkAction { kActivate, kPause, kCancel, kKill, kArchive, kUnarchive, kDelete, kMove };

// "activate", "pause", ... as in the route's path.
const char* BulkActionName(BulkAction action);

struct BulkRequest {
  std::vector<int64_t> ids;  // experimentIds, in order; used when there are no filters
  // filters: the experiments they match are selected instead of `ids` (Determined ignores the
  // ids then), with the action's default states when they name none.
  std::optional<store::ExperimentFilter> filter;
  int64_t filter_project = 0;       // filters.projectId (0: any project)
  int64_t destination_project = 0;  // move: destinationProjectId
};

// The body of a bulk request for `action`; a clear error naming the field otherwise.
Result<BulkRequest> ParseBulkRequest(const nlohmann::json& body, BulkAction action);

// The states a filter selects when it names none: what the action can change (a pause, the
// active experiments; an activation, the paused ones; a kill or cancel, those not ended; an
// archive, unarchive or delete, those ended). Empty: any state.
std::vector<std::string> DefaultBulkStates(BulkAction action);

}  // namespace det::master::api
