#include "master/api/usage_report.h"

#include <gtest/gtest.h>

#include "common/clock.h"

namespace det::master::api {
namespace {

store::AllocationUsageRow Row(const std::string& user, const std::string& from,
                              std::optional<std::string> to, int64_t slots = 1) {
  store::AllocationUsageRow r;
  r.username = user;
  r.resource_pool = "default";
  r.slots = slots;
  r.start_time = *ParseRfc3339(from);
  if (to) r.end_time = *ParseRfc3339(*to);
  return r;
}

TEST(UsageReport, DailyPeriodsSplitAnAllocationAtMidnight) {
  auto days = UsagePeriods(UsagePeriod::kDaily, "2024-02-28", "2024-03-01");
  ASSERT_TRUE(days.ok()) << days.status().ToString();
  ASSERT_EQ(days->size(), 3u);  // a leap year's 29th in between
  EXPECT_EQ((*days)[1].period_start, "2024-02-29");
  AddUsage({Row("alice", "2024-02-28T23:00:00Z", "2024-02-29T01:00:00Z", 2),
            Row("bob", "2024-03-01T10:00:00Z", std::nullopt)},
           *ParseRfc3339("2024-03-01T10:30:00Z"), &*days);
  EXPECT_DOUBLE_EQ((*days)[0].seconds, 7200);  // one hour on two slots
  EXPECT_DOUBLE_EQ((*days)[1].by_username["alice"], 7200);
  EXPECT_DOUBLE_EQ((*days)[2].seconds, 1800);  // running: until now
  EXPECT_DOUBLE_EQ((*days)[2].by_resource_pool["default"], 1800);
  EXPECT_EQ((*days)[2].by_username.count("alice"), 0u);
}

TEST(UsageReport, MonthlyPeriods) {
  auto months = UsagePeriods(UsagePeriod::kMonthly, "2023-12", "2024-02");
  ASSERT_TRUE(months.ok());
  ASSERT_EQ(months->size(), 3u);
  EXPECT_EQ((*months)[0].period_start, "2023-12");
  EXPECT_EQ((*months)[1].begin, *ParseRfc3339("2024-01-01T00:00:00Z"));
  AddUsage({Row("alice", "2023-11-30T00:00:00Z", "2023-12-01T00:00:10Z")}, 0, &*months);
  EXPECT_DOUBLE_EQ((*months)[0].seconds, 10);  // only the part inside the span
}

TEST(UsageReport, BadDatesNameTheField) {
  auto bad = UsagePeriods(UsagePeriod::kDaily, "2024-02-30", "2024-03-01");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("startDate"), std::string::npos);
  EXPECT_FALSE(UsagePeriods(UsagePeriod::kDaily, "2024-03-01", "yesterday").ok());
  EXPECT_FALSE(UsagePeriods(UsagePeriod::kMonthly, "2024-01-01", "2024-02").ok());
  auto backwards = UsagePeriods(UsagePeriod::kDaily, "2024-03-02", "2024-03-01");
  ASSERT_FALSE(backwards.ok());
  EXPECT_NE(backwards.status().message().find("after endDate"), std::string::npos);
  EXPECT_FALSE(UsagePeriods(UsagePeriod::kDaily, "1990-01-01", "2024-01-01").ok());  // too long
}

}  // namespace
}  // namespace det::master::api
