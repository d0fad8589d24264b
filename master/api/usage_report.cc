#include "master/api/usage_report.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace det::master::api {

namespace {

constexpr int64_t kMicrosPerDay = 86400LL * 1000000;
// A request spans at most this many periods (ten years of days, a century of months).
constexpr size_t kMaxPeriods = 3660;

struct YearMonthDay {
  int year = 0, month = 0, day = 1;
};

// "YYYY-MM-DD" or (no day) "YYYY-MM", a real calendar date.
bool ParseDate(const std::string& text, bool with_day, YearMonthDay* out) {
  int consumed = 0;
  int n = with_day ? std::sscanf(text.c_str(), "%4d-%2d-%2d%n", &out->year, &out->month,
                                 &out->day, &consumed)
                   : std::sscanf(text.c_str(), "%4d-%2d%n", &out->year, &out->month, &consumed);
  if (n != (with_day ? 3 : 2) || consumed != static_cast<int>(text.size())) return false;
  if (text.size() != (with_day ? 10u : 7u)) return false;
  if (out->year < 1970 || out->month < 1 || out->month > 12 || out->day < 1) return false;
  std::tm tm{};
  tm.tm_year = out->year - 1900;
  tm.tm_mon = out->month - 1;
  tm.tm_mday = out->day;
  time_t t = timegm(&tm);
  std::tm back{};
  gmtime_r(&t, &back);
  return back.tm_mday == out->day && back.tm_mon == out->month - 1;  // not 2024-02-30
}

int64_t MicrosOf(int year, int month, int day) {
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  return static_cast<int64_t>(timegm(&tm)) * 1000000;
}

std::string Label(int year, int month, int day, bool with_day) {
  char buf[48];  // room for any int, which -Wformat-truncation counts on
  if (with_day) {
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", year, month, day);
  } else {
    std::snprintf(buf, sizeof buf, "%04d-%02d", year, month);
  }
  return buf;
}

}  // namespace

Result<std::vector<UsageEntry>> UsagePeriods(UsagePeriod period, const std::string& start_date,
                                             const std::string& end_date) {
  bool daily = period == UsagePeriod::kDaily;
  const char* form = daily ? "a date such as 2024-01-02" : "a month such as 2024-01";
  YearMonthDay start, end;
  if (!ParseDate(start_date, daily, &start)) {
    return InvalidArgument("startDate: must be " + std::string(form) + " (got '" + start_date +
                           "')");
  }
  if (!ParseDate(end_date, daily, &end)) {
    return InvalidArgument("endDate: must be " + std::string(form) + " (got '" + end_date + "')");
  }
  int64_t first = MicrosOf(start.year, start.month, start.day);
  int64_t last = MicrosOf(end.year, end.month, end.day);
  if (first > last) return InvalidArgument("startDate: must not be after endDate");
  std::vector<UsageEntry> out;
  int year = start.year, month = start.month;
  for (int64_t begin = first; begin <= last;) {
    if (out.size() == kMaxPeriods) {
      return InvalidArgument("startDate..endDate: more than " + std::to_string(kMaxPeriods) +
                             " periods; ask for a shorter span");
    }
    UsageEntry e;
    e.begin = begin;
    if (daily) {
      std::time_t t = static_cast<std::time_t>(begin / 1000000);
      std::tm tm{};
      gmtime_r(&t, &tm);
      e.period_start = Label(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, true);
      e.end = begin + kMicrosPerDay;
    } else {
      e.period_start = Label(year, month, 1, false);
      if (++month > 12) month = 1, ++year;
      e.end = MicrosOf(year, month, 1);
    }
    begin = e.end;
    out.push_back(std::move(e));
  }
  return out;
}

void AddUsage(const std::vector<store::AllocationUsageRow>& rows, int64_t now,
              std::vector<UsageEntry>* entries) {
  if (entries->empty()) return;
  for (const store::AllocationUsageRow& r : rows) {
    int64_t stop = std::max(r.end_time.value_or(now), r.start_time);
    // The first period the record reaches, then each one it overlaps.
    auto it = std::upper_bound(entries->begin(), entries->end(), r.start_time,
                               [](int64_t t, const UsageEntry& e) { return t < e.end; });
    for (; it != entries->end() && it->begin < stop; ++it) {
      int64_t overlap = std::min(stop, it->end) - std::max(r.start_time, it->begin);
      if (overlap <= 0) continue;
      double seconds = static_cast<double>(overlap) / 1e6 * static_cast<double>(r.slots);
      it->seconds += seconds;
      it->by_username[r.username] += seconds;
      it->by_resource_pool[r.resource_pool] += seconds;
    }
  }
}

}  // namespace det::master::api
