#pragma once
// The filters of GET /api/v1/trials/{id}/logs and /api/v1/tasks/{id}/logs, as Determined's:
// allocationIds, agentIds, containerIds, rankIds (-1: a log without a rank), sources, stdtypes,
// levels (each repeated; a log passes when it matches one value of every filter given),
// timestampBefore / timestampAfter (RFC 3339) and searchText (substring). And LogFields, the
// distinct values those filters can take in a task's logs (GET .../logs/fields). Pure.

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/status.h"
#include "master/store/store.h"

namespace det::master::api {

struct LogFilter {
  std::vector<std::string> allocation_ids;
  std::vector<std::string> agent_ids;
  std::vector<std::string> container_ids;
  std::vector<int64_t> rank_ids;
  std::vector<std::string> sources;
  std::vector<std::string> stdtypes;
  std::vector<std::string> levels;  // LOG_LEVEL_*; a log without a level counts as INFO
  std::optional<int64_t> before;    // micros, exclusive
  std::optional<int64_t> after;     // micros, exclusive
  std::string search_text;

  bool Empty() const;
  bool Matches(const store::TaskLogRow& row) const;
};

// Reads the filters through `query_all(name)` (every value of a query parameter); bad values
// are errors naming the parameter.
Result<LogFilter> ParseLogFilter(
    const std::function<std::vector<std::string>(const std::string&)>& query_all);

// The distinct filter values seen in the logs added, each list in first-seen order. A trial
// chooses what it logs, so each list keeps at most kMaxValues (the rest are not filters anyone
// picks from) and membership is a hash lookup: a million distinct values cost linear time.
class LogFields {
 public:
  static constexpr size_t kMaxValues = 1000;
  // True when `row` brought a value not seen before.
  bool Add(const store::TaskLogRow& row);
  // Determined's TaskLogsFieldsResponse (with allocationIds) or TrialLogsFieldsResponse.
  nlohmann::json ToJson(bool with_allocations) const;

 private:
  template <typename T>
  struct Seen {
    std::vector<T> order;
    std::unordered_set<T> set;
    bool Note(const T& v);
  };
  Seen<std::string> allocation_ids_, agent_ids_, container_ids_, stdtypes_, sources_;
  Seen<int64_t> rank_ids_;
};

}  // namespace det::master::api
