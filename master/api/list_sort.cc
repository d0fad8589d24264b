#include "master/api/list_sort.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "common/clock.h"

namespace det::master::api {

using nlohmann::json;

Result<std::string> ParseSortBy(const std::string& value, std::span<const SortField> fields,
                                const char* param) {
  if (value.empty() || value == "SORT_BY_UNSPECIFIED" || value == "0") return std::string();
  for (const SortField& f : fields) {
    if (value == f.name || value == std::to_string(f.number)) return std::string(f.name);
  }
  std::string names = "SORT_BY_UNSPECIFIED";
  for (const SortField& f : fields) names += std::string(", ") + f.name;
  return InvalidArgument(std::string(param) + ": unknown value \"" + value +
                         "\" (accepted: " + names + ")");
}

Result<std::optional<bool>> ParseOrderBy(const std::string& value) {
  if (value.empty() || value == "ORDER_BY_UNSPECIFIED" || value == "0") {
    return std::optional<bool>();
  }
  if (value == "ORDER_BY_ASC" || value == "1") return std::optional<bool>(false);
  if (value == "ORDER_BY_DESC" || value == "2") return std::optional<bool>(true);
  return InvalidArgument("orderBy: unknown value \"" + value +
                         "\" (accepted: ORDER_BY_UNSPECIFIED, ORDER_BY_ASC, ORDER_BY_DESC)");
}

void SortJsonArray(json& items, const std::function<json(const json&)>& key, bool descending) {
  if (!items.is_array()) return;
  std::vector<json> keys;
  keys.reserve(items.size());
  for (const json& item : items) keys.push_back(key(item));
  std::vector<size_t> order(items.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const json& ka = keys[a];
    const json& kb = keys[b];
    if (ka.is_null() || kb.is_null()) return !ka.is_null() && kb.is_null();
    return descending ? kb < ka : ka < kb;
  });
  json out = json::array();
  for (size_t i : order) out.push_back(std::move(items[i]));
  items = std::move(out);
}

void ApplyListSort(
    json& items, const std::string& field, std::optional<bool> descending,
    const std::function<std::function<json(const json&)>(const std::string&)>& key_of) {
  if (!items.is_array()) return;
  if (field.empty()) {
    if (descending.value_or(false)) std::reverse(items.begin(), items.end());
    return;
  }
  SortJsonArray(items, key_of(field), descending.value_or(false));
}

namespace {

using KeyFn = std::function<json(const json&)>;

// A field of the item (null when absent).
KeyFn Field(const char* name) {
  return [name](const json& item) {
    auto it = item.find(name);
    return it == item.end() ? json(nullptr) : *it;
  };
}

// An RFC 3339 time field as micros, so fractions of a second order right (null when absent).
KeyFn TimeField(const char* name) {
  return [name](const json& item) -> json {
    auto it = item.find(name);
    if (it == item.end() || !it->is_string()) return nullptr;
    std::optional<int64_t> t = ParseRfc3339(it->get<std::string>());
    return t ? json(*t) : json(nullptr);
  };
}

// A string field, lower-cased (names sort regardless of case).
KeyFn LowerField(const char* name) {
  return [name](const json& item) -> json {
    auto it = item.find(name);
    if (it == item.end() || !it->is_string()) return nullptr;
    std::string s = it->get<std::string>();
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  };
}

// The numeric value of metric `name` in a validation workload field (null when absent).
KeyFn ValidationMetric(const char* field, std::string name) {
  return [field, name](const json& item) -> json {
    auto v = item.find(field);
    if (v == item.end() || !v->is_object()) return nullptr;
    const json& avg = v->value("metrics", json::object()).value("avgMetrics", json::object());
    auto m = avg.find(name);
    return m != avg.end() && m->is_number() ? *m : json(nullptr);
  };
}

Status Apply(json& items, const std::string& sort_by, const std::string& order_by,
             std::span<const SortField> fields,
             const std::function<KeyFn(const std::string&)>& key_of) {
  DET_ASSIGN_OR_RETURN(std::string field, ParseSortBy(sort_by, fields));
  DET_ASSIGN_OR_RETURN(std::optional<bool> desc, ParseOrderBy(order_by));
  ApplyListSort(items, field, desc, key_of);
  return Status::Ok();
}

}  // namespace

Status SortTrials(json& trials, const std::string& sort_by, const std::string& order_by,
                  const std::string& searcher_metric, int64_t now_micros) {
  static constexpr SortField kFields[] = {{"SORT_BY_ID", 1},
                                          {"SORT_BY_START_TIME", 4},
                                          {"SORT_BY_END_TIME", 5},
                                          {"SORT_BY_STATE", 6},
                                          {"SORT_BY_BEST_VALIDATION_METRIC", 7},
                                          {"SORT_BY_LATEST_VALIDATION_METRIC", 8},
                                          {"SORT_BY_BATCHES_PROCESSED", 9},
                                          {"SORT_BY_DURATION", 10},
                                          {"SORT_BY_RESTARTS", 11},
                                          {"SORT_BY_CHECKPOINT_SIZE", 12},
                                          {"SORT_BY_LOG_RETENTION_DAYS", 13}};
  return Apply(trials, sort_by, order_by, kFields, [&](const std::string& f) -> KeyFn {
    if (f == "SORT_BY_START_TIME") return TimeField("startTime");
    if (f == "SORT_BY_END_TIME") return TimeField("endTime");
    if (f == "SORT_BY_STATE") return Field("state");
    if (f == "SORT_BY_BEST_VALIDATION_METRIC") {
      return ValidationMetric("bestValidation", searcher_metric);
    }
    if (f == "SORT_BY_LATEST_VALIDATION_METRIC") {
      return ValidationMetric("latestValidation", searcher_metric);
    }
    if (f == "SORT_BY_BATCHES_PROCESSED") return Field("totalBatchesProcessed");
    if (f == "SORT_BY_DURATION") {
      return [now_micros](const json& t) -> json {
        json start = TimeField("startTime")(t);
        json end = TimeField("endTime")(t);
        if (start.is_null()) return nullptr;
        return (end.is_null() ? now_micros : end.get<int64_t>()) - start.get<int64_t>();
      };
    }
    if (f == "SORT_BY_RESTARTS") return Field("restarts");
    if (f == "SORT_BY_CHECKPOINT_SIZE") {
      // uint64 travels as a string, as in Determined.
      return [](const json& t) -> json {
        auto it = t.find("totalCheckpointSize");
        if (it == t.end()) return nullptr;
        if (it->is_string()) return std::atoll(it->get<std::string>().c_str());
        return *it;
      };
    }
    if (f == "SORT_BY_LOG_RETENTION_DAYS") return Field("logRetentionDays");
    return Field("id");
  });
}

Status SortUsers(json& users, const std::string& sort_by, const std::string& order_by) {
  static constexpr SortField kFields[] = {{"SORT_BY_DISPLAY_NAME", 1},   {"SORT_BY_USER_NAME", 2},
                                          {"SORT_BY_ADMIN", 3},          {"SORT_BY_ACTIVE", 4},
                                          {"SORT_BY_MODIFIED_TIME", 5},  {"SORT_BY_NAME", 6},
                                          {"SORT_BY_LAST_AUTH_TIME", 7}, {"SORT_BY_REMOTE", 8}};
  return Apply(users, sort_by, order_by, kFields, [](const std::string& f) -> KeyFn {
    if (f == "SORT_BY_DISPLAY_NAME") return LowerField("displayName");
    if (f == "SORT_BY_USER_NAME") return LowerField("username");
    if (f == "SORT_BY_ADMIN") return Field("admin");
    if (f == "SORT_BY_ACTIVE") return Field("active");
    if (f == "SORT_BY_MODIFIED_TIME") return TimeField("modifiedAt");
    if (f == "SORT_BY_LAST_AUTH_TIME") return TimeField("lastAuthAt");
    if (f == "SORT_BY_REMOTE") return Field("remote");
    // SORT_BY_NAME: the display name where there is one, else the username.
    return [](const json& u) -> json {
      json display = LowerField("displayName")(u);
      if (display.is_string() && !display.get<std::string>().empty()) return display;
      return LowerField("username")(u);
    };
  });
}

Status SortWorkspaces(json& workspaces, const std::string& sort_by, const std::string& order_by) {
  static constexpr SortField kFields[] = {{"SORT_BY_ID", 1}, {"SORT_BY_NAME", 2}};
  SortJsonArray(workspaces, Field("id"), false);  // the default order
  return Apply(workspaces, sort_by, order_by, kFields, [](const std::string& f) -> KeyFn {
    return f == "SORT_BY_NAME" ? LowerField("name") : Field("id");
  });
}

Status SortProjects(json& projects, const std::string& sort_by, const std::string& order_by) {
  static constexpr SortField kFields[] = {{"SORT_BY_CREATION_TIME", 1},
                                          {"SORT_BY_LAST_EXPERIMENT_START_TIME", 2},
                                          {"SORT_BY_NAME", 3},
                                          {"SORT_BY_DESCRIPTION", 4},
                                          {"SORT_BY_ID", 5}};
  SortJsonArray(projects, Field("id"), false);  // the default order
  return Apply(projects, sort_by, order_by, kFields, [](const std::string& f) -> KeyFn {
    if (f == "SORT_BY_LAST_EXPERIMENT_START_TIME") return TimeField("lastExperimentStartedAt");
    if (f == "SORT_BY_NAME") return LowerField("name");
    if (f == "SORT_BY_DESCRIPTION") return LowerField("description");
    // SORT_BY_CREATION_TIME: ids are given in creation order.
    return Field("id");
  });
}

Status SortTemplates(json& templates, const std::string& sort_by, const std::string& order_by) {
  static constexpr SortField kFields[] = {{"SORT_BY_NAME", 1}};
  return Apply(templates, sort_by, order_by, kFields,
               [](const std::string&) -> KeyFn { return Field("name"); });
}

Status SortAgents(json& agents, const std::string& sort_by, const std::string& order_by) {
  static constexpr SortField kFields[] = {{"SORT_BY_ID", 1}, {"SORT_BY_TIME", 2}};
  return Apply(agents, sort_by, order_by, kFields, [](const std::string& f) -> KeyFn {
    return f == "SORT_BY_TIME" ? TimeField("registeredTime") : Field("id");
  });
}

}  // namespace det::master::api
