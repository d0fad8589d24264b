#include "master/api/experiment_filter.h"

#include <algorithm>
#include <map>

#include "common/whole_int64.h"
#include "master/api/list_sort.h"

namespace det::master::api {

namespace {

// Splits comma-separated values too: ?states=STATE_ACTIVE,STATE_PAUSED as well as repeats.
std::vector<std::string> Values(const server::HttpRequest& req, const char* name) {
  std::vector<std::string> out;
  for (const std::string& raw : req.QueryAll(name)) {
    size_t start = 0;
    while (start <= raw.size()) {
      size_t comma = raw.find(',', start);
      if (comma == std::string::npos) comma = raw.size();
      std::string v = raw.substr(start, comma - start);
      if (!v.empty()) out.push_back(v);
      start = comma + 1;
    }
  }
  return out;
}

Result<std::vector<int64_t>> Ints(const server::HttpRequest& req, const char* name) {
  std::vector<int64_t> out;
  for (const std::string& v : Values(req, name)) {
    std::optional<int64_t> id = WholeInt64(v);
    if (!id) return InvalidArgument(std::string(name) + ": \"" + v + "\" is not an integer");
    out.push_back(*id);
  }
  return out;
}

Result<std::optional<int64_t>> OptInt(const server::HttpRequest& req, const char* name) {
  DET_ASSIGN_OR_RETURN(std::vector<int64_t> all, Ints(req, name));
  if (all.empty()) return std::optional<int64_t>();
  return std::optional<int64_t>(all.back());
}

}  // namespace

Result<std::vector<std::string>> StoredStatesFor(const std::string& api_state) {
  static const std::map<std::string, std::vector<std::string>> kStates = {
      // ACTIVE is shown as QUEUED or RUNNING (by whether a trial runs); all three select it.
      {"STATE_ACTIVE", {"ACTIVE"}},
      {"STATE_RUNNING", {"ACTIVE"}},
      {"STATE_QUEUED", {"ACTIVE"}},
      {"STATE_PULLING", {"ACTIVE"}},
      {"STATE_STARTING", {"ACTIVE"}},
      {"STATE_PAUSED", {"PAUSED"}},
      {"STATE_STOPPING_COMPLETED", {"STOPPING_COMPLETED"}},
      {"STATE_STOPPING_CANCELED", {"STOPPING_CANCELED"}},
      {"STATE_STOPPING_KILLED", {"STOPPING_KILLED"}},
      {"STATE_STOPPING_ERROR", {"STOPPING_ERROR"}},
      {"STATE_COMPLETED", {"COMPLETED"}},
      {"STATE_CANCELED", {"CANCELED"}},
      {"STATE_ERROR", {"ERROR"}},
      {"STATE_DELETING", {"DELETING"}},
      {"STATE_DELETE_FAILED", {"DELETE_FAILED"}},
      {"STATE_DELETED", {"DELETED"}},
  };
  auto it = kStates.find(api_state);
  if (it == kStates.end()) {
    return InvalidArgument("states: \"" + api_state +
                           "\" is not an experiment state (STATE_ACTIVE, STATE_PAUSED, "
                           "STATE_COMPLETED, STATE_CANCELED, STATE_ERROR, ...)");
  }
  return it->second;
}

Result<store::ExperimentFilter> ParseExperimentFilter(const server::HttpRequest& req) {
  using Key = store::ExperimentSortKey;
  static const std::map<std::string, Key> kSort = {
      {"SORT_BY_UNSPECIFIED", Key::kId},
      {"SORT_BY_ID", Key::kId},
      {"SORT_BY_DESCRIPTION", Key::kDescription},
      {"SORT_BY_START_TIME", Key::kStartTime},
      {"SORT_BY_END_TIME", Key::kEndTime},
      {"SORT_BY_STATE", Key::kState},
      {"SORT_BY_NUM_TRIALS", Key::kNumTrials},
      {"SORT_BY_PROGRESS", Key::kProgress},
      {"SORT_BY_USER", Key::kUser},
      {"SORT_BY_NAME", Key::kName},
      {"SORT_BY_FORKED_FROM", Key::kForkedFrom},
      {"SORT_BY_RESOURCE_POOL", Key::kResourcePool},
      {"SORT_BY_PROJECT_ID", Key::kId},  // one project: the same order as by id
      {"SORT_BY_CHECKPOINT_SIZE", Key::kCheckpointSize},
      {"SORT_BY_CHECKPOINT_COUNT", Key::kCheckpointCount},
      {"SORT_BY_SEARCHER_METRIC_VAL", Key::kSearcherMetricVal},
  };
  store::ExperimentFilter f;
  std::string sort = req.Query("sortBy", req.Query("sort_by"));
  if (!sort.empty()) {
    auto it = kSort.find(sort);
    if (it == kSort.end()) {
      return InvalidArgument("sortBy: \"" + sort +
                             "\" is not supported (SORT_BY_ID, SORT_BY_NAME, SORT_BY_START_TIME, "
                             "SORT_BY_END_TIME, SORT_BY_STATE, SORT_BY_PROGRESS, SORT_BY_USER, "
                             "SORT_BY_NUM_TRIALS, SORT_BY_DESCRIPTION, SORT_BY_FORKED_FROM, "
                             "SORT_BY_RESOURCE_POOL, SORT_BY_CHECKPOINT_SIZE, "
                             "SORT_BY_CHECKPOINT_COUNT, SORT_BY_SEARCHER_METRIC_VAL)");
    }
    f.sort_by = it->second;
  }
  DET_ASSIGN_OR_RETURN(std::optional<bool> order,
                       ParseOrderBy(req.Query("orderBy", req.Query("order_by"))));
  f.descending = order.value_or(false);
  std::string archived = req.Query("archived");
  if (archived == "true" || archived == "1") {
    f.archived = true;
  } else if (archived == "false" || archived == "0") {
    f.archived = false;
  } else if (!archived.empty()) {
    return InvalidArgument("archived: \"" + archived + "\" is not true or false");
  }
  for (const std::string& s : Values(req, "states")) {
    DET_ASSIGN_OR_RETURN(std::vector<std::string> stored, StoredStatesFor(s));
    for (auto& v : stored) {
      if (std::find(f.states.begin(), f.states.end(), v) == f.states.end()) f.states.push_back(v);
    }
  }
  f.usernames = Values(req, "users");
  DET_ASSIGN_OR_RETURN(f.user_ids, Ints(req, "userIds"));
  DET_ASSIGN_OR_RETURN(f.id_gt, OptInt(req, "experimentIdFilter.gt"));
  DET_ASSIGN_OR_RETURN(f.id_gte, OptInt(req, "experimentIdFilter.gte"));
  DET_ASSIGN_OR_RETURN(f.id_lt, OptInt(req, "experimentIdFilter.lt"));
  DET_ASSIGN_OR_RETURN(f.id_lte, OptInt(req, "experimentIdFilter.lte"));
  DET_ASSIGN_OR_RETURN(f.id_in, Ints(req, "experimentIdFilter.incl"));
  DET_ASSIGN_OR_RETURN(f.id_not_in, Ints(req, "experimentIdFilter.notIn"));
  f.labels = Values(req, "labels");
  f.name = req.Query("name");
  f.description = req.Query("description");
  return f;
}

}  // namespace det::master::api
