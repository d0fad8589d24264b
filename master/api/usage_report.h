#pragma once
// Determined's aggregated usage (GET /api/v1/resources/allocation/aggregated): slot-seconds of
// the allocation usage records per day or month, in total and by user and resource pool. Pure:
// the records and "now" come in, the entries go out.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/store/store.h"

namespace det::master::api {

enum class UsagePeriod { kDaily, kMonthly };

struct UsageEntry {
  std::string period_start;  // "2024-01-02" (daily) or "2024-01" (monthly)
  int64_t begin = 0;         // micros, inclusive
  int64_t end = 0;           // micros, exclusive
  double seconds = 0;        // slot-seconds
  std::map<std::string, double> by_username;
  std::map<std::string, double> by_resource_pool;
};

// The periods from the one holding `start_date` to the one holding `end_date` ("YYYY-MM-DD" for
// daily, "YYYY-MM" for monthly, UTC), each empty; errors name startDate / endDate.
Result<std::vector<UsageEntry>> UsagePeriods(UsagePeriod period, const std::string& start_date,
                                             const std::string& end_date);

// Adds each record's slot-seconds to the periods it overlaps (a running one runs until `now`).
void AddUsage(const std::vector<store::AllocationUsageRow>& rows, int64_t now,
              std::vector<UsageEntry>* entries);

}  // namespace det::master::api
