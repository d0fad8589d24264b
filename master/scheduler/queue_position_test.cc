#include "master/scheduler/queue_position.h"

#include <gtest/gtest.h>

namespace det::master::scheduler {
namespace {

TEST(QueuePositionTest, FromMicrosOrdersBySubmission) {
  EXPECT_LT(QueuePosition::FromMicros(1), QueuePosition::FromMicros(2));
  EXPECT_EQ(QueuePosition::FromMicros(7), QueuePosition::FromMicros(7));
  EXPECT_EQ(QueuePosition::FromMicros(1640995260000000).ToString(), "1640995260000000");
}

TEST(QueuePositionTest, AverageIsExact) {
  QueuePosition a = QueuePosition::FromMicros(1), b = QueuePosition::FromMicros(2);
  QueuePosition m = QueuePosition::Average(a, b);
  EXPECT_EQ(m.ToString(), "1.5");
  EXPECT_LT(a, m);
  EXPECT_LT(m, b);
  EXPECT_EQ(QueuePosition::Average(a, m).ToString(), "1.25");
  EXPECT_EQ(QueuePosition::Average(a, a), a);
  EXPECT_EQ(QueuePosition::Average(QueuePosition::FromMicros(3), QueuePosition::FromMicros(8))
                .ToString(),
            "5.5");
}

// Ensures repeated moves ahead of the same job never collide (what floats would do after ~52).
TEST(QueuePositionTest, RepeatedAveragingStaysDistinct) {
  QueuePosition head = QueuePosition::FromMicros(1);
  QueuePosition p = QueuePosition::FromMicros(1640995260000000);
  for (int i = 0; i < 300; ++i) {
    QueuePosition next = QueuePosition::Average(head, p);
    ASSERT_LT(head, next);
    ASSERT_LT(next, p);
    ASSERT_NE(next, p);
    p = next;
  }
  EXPECT_GT(p.FractionBits(), 200);
  auto parsed = QueuePosition::Parse(p.ToString());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, p);
}

TEST(QueuePositionTest, NegativeValuesRoundTrip) {
  QueuePosition m = QueuePosition::Average(QueuePosition::FromMicros(-3),
                                           QueuePosition::FromMicros(0));
  EXPECT_EQ(m.ToString(), "-1.5");
  EXPECT_LT(m, QueuePosition::FromMicros(-1));
  EXPECT_GT(m, QueuePosition::FromMicros(-2));
  auto parsed = QueuePosition::Parse("-1.5");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, m);
  EXPECT_EQ(QueuePosition::FromMicros(1).PlusUnits(-1).PlusUnits(-1).ToString(), "-1");
}

TEST(QueuePositionTest, ParseRejectsInexactAndGarbage) {
  EXPECT_TRUE(QueuePosition::Parse("12.75").ok());
  EXPECT_EQ(QueuePosition::Parse("12.750").value(), QueuePosition::Parse("12.75").value());
  EXPECT_FALSE(QueuePosition::Parse("0.1").ok());
  EXPECT_FALSE(QueuePosition::Parse("abc").ok());
  EXPECT_FALSE(QueuePosition::Parse("1.").ok());
  EXPECT_FALSE(QueuePosition::Parse("").ok());
  EXPECT_EQ(QueuePosition::Parse("0.1").status().message(),
            "invalid queue position \"0.1\": fraction is not an exact binary fraction");
}

}  // namespace
}  // namespace det::master::scheduler
