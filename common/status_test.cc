#include "common/status.h"

#include <gtest/gtest.h>

#include "common/clock.h"

namespace det {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument("x must be even");
  return x / 2;
}

Result<int> Quarter(int x) {
  DET_ASSIGN_OR_RETURN(int h, Half(x));
  return Half(h);
}

// Ensures errors propagate through DET_ASSIGN_OR_RETURN with their code and message.
TEST(StatusTest, PropagatesErrors) {
  EXPECT_EQ(*Quarter(8), 2);
  Result<int> r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "x must be even");
}

TEST(ClockTest, FormatsRfc3339WithMicros) {
  EXPECT_EQ(FormatRfc3339(1700000000123456), "2023-11-14T22:13:20.123456Z");
  EXPECT_EQ(ParseRfc3339("2023-11-14T22:13:20.123456Z"), 1700000000123456);
  EXPECT_EQ(ParseRfc3339("2023-11-14T23:13:20.5+01:00"), 1700000000500000);
  EXPECT_EQ(ParseRfc3339("yesterday"), std::nullopt);
  FakeClock clock(10);
  clock.Advance(5);
  EXPECT_EQ(clock.NowMicros(), 15);
}

}  // namespace
}  // namespace det
