#include "master/api/log_filter.h"

#include <algorithm>
#include <cstdlib>

#include "common/clock.h"
#include "common/whole_int64.h"

namespace det::master::api {

namespace {

template <typename T>
bool In(const std::vector<T>& set, const T& v) {
  return set.empty() || std::find(set.begin(), set.end(), v) != set.end();
}

Result<std::optional<int64_t>> Time(const std::vector<std::string>& values, const char* name) {
  if (values.empty() || values.back().empty()) return std::optional<int64_t>();
  std::optional<int64_t> t = ParseRfc3339(values.back());
  if (!t) {
    return InvalidArgument(std::string(name) +
                           ": must be an RFC 3339 time such as "
                           "2021-10-26T23:17:12Z (got '" +
                           values.back() + "')");
  }
  return t;
}

}  // namespace

bool LogFilter::Empty() const {
  return allocation_ids.empty() && agent_ids.empty() && container_ids.empty() && rank_ids.empty() && sources.empty() &&
         stdtypes.empty() && levels.empty() && !before && !after && search_text.empty();
}

bool LogFilter::Matches(const store::TaskLogRow& r) const {
  if (!In(agent_ids, r.agent_id) || !In(container_ids, r.container_id)) return false;
  if (!In(allocation_ids, r.allocation_id)) return false;
  // -1 names "no rank" (Determined's convention), so a filter can ask for unranked lines.
  if (!In(rank_ids, r.rank_id.value_or(-1))) return false;
  if (!In(sources, r.source) || !In(stdtypes, r.stdtype)) return false;
  if (!In(levels, r.level.empty() ? std::string("LOG_LEVEL_INFO") : r.level)) return false;
  if (before && r.timestamp >= *before) return false;
  if (after && r.timestamp <= *after) return false;
  if (!search_text.empty() && r.log.find(search_text) == std::string::npos) return false;
  return true;
}

Result<LogFilter> ParseLogFilter(
    const std::function<std::vector<std::string>(const std::string&)>& query_all) {
  LogFilter f;
  f.allocation_ids = query_all("allocationIds");
  f.agent_ids = query_all("agentIds");
  f.container_ids = query_all("containerIds");
  f.sources = query_all("sources");
  f.stdtypes = query_all("stdtypes");
  for (const std::string& l : query_all("levels")) {
    if (l.rfind("LOG_LEVEL_", 0) != 0) {
      return InvalidArgument(
          "levels: must be LOG_LEVEL_TRACE, _DEBUG, _INFO, _WARNING, _ERROR "
          "or _CRITICAL (got '" +
          l + "')");
    }
    f.levels.push_back(l);
  }
  for (const std::string& v : query_all("rankIds")) {
    std::optional<int64_t> id = WholeInt64(v);
    if (!id) return InvalidArgument("rankIds: must be integers (got '" + v + "')");
    f.rank_ids.push_back(*id);
  }
  DET_ASSIGN_OR_RETURN(f.before, Time(query_all("timestampBefore"), "timestampBefore"));
  DET_ASSIGN_OR_RETURN(f.after, Time(query_all("timestampAfter"), "timestampAfter"));
  std::vector<std::string> search = query_all("searchText");
  if (!search.empty()) f.search_text = search.back();
  return f;
}

template <typename T>
bool LogFields::Seen<T>::Note(const T& v) {
  if (order.size() >= kMaxValues || !set.insert(v).second) return false;
  order.push_back(v);
  return true;
}

bool LogFields::Add(const store::TaskLogRow& r) {
  bool added = false;
  for (auto [seen, v] : {std::pair{&allocation_ids_, &r.allocation_id},
                         std::pair{&agent_ids_, &r.agent_id},
                         std::pair{&container_ids_, &r.container_id},
                         std::pair{&stdtypes_, &r.stdtype}, std::pair{&sources_, &r.source}}) {
    if (!v->empty()) added = seen->Note(*v) || added;
  }
  if (r.rank_id) added = rank_ids_.Note(*r.rank_id) || added;
  return added;
}

nlohmann::json LogFields::ToJson(bool with_allocations) const {
  nlohmann::json out = {{"agentIds", agent_ids_.order},
                        {"containerIds", container_ids_.order},
                        {"rankIds", rank_ids_.order},
                        {"stdtypes", stdtypes_.order},
                        {"sources", sources_.order}};
  if (with_allocations) out["allocationIds"] = allocation_ids_.order;
  return out;
}

}  // namespace det::master::api
