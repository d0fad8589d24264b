#include "master/core/cluster_message.h"

#include <gtest/gtest.h>

#include "common/clock.h"

namespace det::master::core {
namespace {

using nlohmann::json;

const int64_t kNow = *ParseRfc3339("2030-01-01T00:00:00Z");

std::string Error(const json& body) {
  auto m = ParseClusterMessage(body, kNow);
  return m.ok() ? "" : m.status().message();
}

TEST(ClusterMessageTest, StartsNowAndEndsWhenAsked) {
  auto m = ParseClusterMessage({{"message", "maintenance at 6"}}, kNow);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->start_time, kNow);
  EXPECT_FALSE(m->end_time.has_value());
  EXPECT_TRUE(ClusterMessageActive(*m, kNow));
  json j = ClusterMessageJson(*m);
  EXPECT_EQ(j["startTime"], "2030-01-01T00:00:00Z");
  EXPECT_FALSE(j.contains("endTime"));

  m = ParseClusterMessage({{"message", "x"}, {"endTime", "2031-05-06T07:08:09.123456Z"}}, kNow);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(ClusterMessageJson(*m)["endTime"], "2031-05-06T07:08:09.123456Z");
}

TEST(ClusterMessageTest, DurationFromAFutureStart) {
  auto m = ParseClusterMessage(
      {{"message", "x"}, {"startTime", "2035-01-01T00:00:00Z"}, {"duration", "22h"}}, kNow);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(ClusterMessageJson(*m)["endTime"], "2035-01-01T22:00:00Z");
  EXPECT_FALSE(ClusterMessageActive(*m, kNow));  // scheduled: not shown yet
  EXPECT_TRUE(ClusterMessageCurrent(*m, kNow));  // but an admin's get shows it
  EXPECT_EQ(ParseMessageDuration("1h30m").value(), 5400'000'000);
  EXPECT_EQ(ParseMessageDuration("2w").value(), 14 * 86400'000'000LL);
}

TEST(ClusterMessageTest, RefusalsNameTheField) {
  EXPECT_EQ(Error(json::object()), "message: required, the text to show");
  EXPECT_NE(Error({{"message", std::string(251, 'a')}}).find("at most 250 characters; got 251"),
            std::string::npos);
  // 250 characters of three bytes each are still 250 characters.
  std::string wide;
  for (int i = 0; i < 250; ++i) wide += "é";
  EXPECT_EQ(Error({{"message", wide}}), "");
  EXPECT_NE(Error({{"message", "x"}, {"endTime", "tomorrow"}})
                .find("endTime: \"tomorrow\" is not RFC 3339"),
            std::string::npos);
  EXPECT_NE(Error({{"message", "x"}, {"endTime", "2029-01-01T00:00:00Z"}})
                .find("must be after the start"),
            std::string::npos);
  EXPECT_NE(Error({{"message", "x"}, {"endTime", "2031-01-01T00:00:00Z"}, {"duration", "1h"}})
                .find("not both"),
            std::string::npos);
  EXPECT_NE(Error({{"message", "x"}, {"duration", "3y"}}).find("unknown unit 'y'"),
            std::string::npos);
  EXPECT_NE(Error({{"message", "x"}, {"duration", "h"}}).find("is not a length"),
            std::string::npos);
}

TEST(ClusterMessageTest, ProtoTimestampDigits) {
  EXPECT_EQ(ProtoTimestamp(kNow + 123000), "2030-01-01T00:00:00.123Z");
  EXPECT_EQ(ProtoTimestamp(kNow + 123456), "2030-01-01T00:00:00.123456Z");
}

}  // namespace
}  // namespace det::master::core
