#pragma once
// Determined's list sorting: a list request's `sortBy` (or `sortByAttr`) names one of the list's
// SortBy enum values (by name, or by number as grpc-gateway also accepts) and `orderBy` is
// ORDER_BY_ASC / ORDER_BY_DESC. Pure: parsing and a stable sort of rendered items by a key.

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>

#include "common/status.h"

namespace det::master::api {

// One value of a list's SortBy enum.
struct SortField {
  const char* name;  // "SORT_BY_NAME"
  int number;        // its number in Determined's proto
};

// The SortBy value named by `value` (its name or number) among `fields`; "" for an empty value
// or SORT_BY_UNSPECIFIED (0), which keep the list's default order. Anything else is an error
// naming `param`, the value and the accepted names.
Result<std::string> ParseSortBy(const std::string& value, std::span<const SortField> fields,
                                const char* param = "sortBy");

// orderBy: nullopt for "" and ORDER_BY_UNSPECIFIED (0), false for ORDER_BY_ASC (1), true for
// ORDER_BY_DESC (2); anything else is an error naming the value.
Result<std::optional<bool>> ParseOrderBy(const std::string& value);

// Stable-sorts the JSON array `items` by `key(item)`, ascending or descending; a null key sorts
// after every other key in both directions (as Determined puts trials without an end time last).
// Items with equal keys keep their order.
void SortJsonArray(nlohmann::json& items,
                   const std::function<nlohmann::json(const nlohmann::json&)>& key,
                   bool descending);

// Applies a list request: with a sort field, sorts by `key_of(field)`, in `descending` order
// (default ascending); without one, keeps the default order, reversed for ORDER_BY_DESC.
void ApplyListSort(
    nlohmann::json& items, const std::string& field, std::optional<bool> descending,
    const std::function<std::function<nlohmann::json(const nlohmann::json&)>(const std::string&)>&
        key_of);

// The lists Determined sorts, each by its SortBy enum (names and numbers of Determined's protos),
// applied to the rendered items of the list in their default order. Errors name the parameter,
// the value and what is accepted.

// GET /api/v1/experiments/{id}/trials (GetExperimentTrialsRequest.SortBy). Validation metrics
// are the values of `searcher_metric` in bestValidation / latestValidation; durations run to
// `now_micros` for trials without an end time.
Status SortTrials(nlohmann::json& trials, const std::string& sort_by, const std::string& order_by,
                  const std::string& searcher_metric, int64_t now_micros);
// GET /api/v1/users (GetUsersRequest.SortBy).
Status SortUsers(nlohmann::json& users, const std::string& sort_by, const std::string& order_by);
// GET /api/v1/workspaces (GetWorkspacesRequest.SortBy).
Status SortWorkspaces(nlohmann::json& workspaces, const std::string& sort_by,
                      const std::string& order_by);
// GET /api/v1/workspaces/{id}/projects (GetWorkspaceProjectsRequest.SortBy).
Status SortProjects(nlohmann::json& projects, const std::string& sort_by,
                    const std::string& order_by);
// GET /api/v1/templates (GetTemplatesRequest.SortBy).
Status SortTemplates(nlohmann::json& templates, const std::string& sort_by,
                     const std::string& order_by);
// GET /api/v1/agents (GetAgentsRequest.SortBy).
Status SortAgents(nlohmann::json& agents, const std::string& sort_by, const std::string& order_by);

}  // namespace det::master::api
