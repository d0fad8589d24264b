#pragma once
// Parses GET /api/v1/experiments' query parameters, with Determined's names, into a
// store::ExperimentFilter: sortBy (SORT_BY_*), orderBy (ORDER_BY_ASC|DESC), states (STATE_*,
// repeated), users (repeated usernames), userIds, labels (repeated, all must be present), name
// and description (case-insensitive substrings), archived, experimentIdFilter.{gt,gte,lt,lte,
// incl,notIn}. Pure: no I/O.

#include "common/status.h"
#include "master/server/http_server.h"
#include "master/store/store.h"

namespace det::master::api {

Result<store::ExperimentFilter> ParseExperimentFilter(const server::HttpRequest& req);

// The stored run states an API state filter (STATE_ACTIVE, STATE_RUNNING, ...) stands for;
// an error naming the value when it is not a state.
Result<std::vector<std::string>> StoredStatesFor(const std::string& api_state);

}  // namespace det::master::api
