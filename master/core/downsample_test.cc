#include "master/core/downsample.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

namespace det::master::core {
namespace {

using ::testing::ElementsAre;

TEST(DownsampleTargets, KeepsBothEndsAndSpreadsEvenly) {
  EXPECT_EQ(DownsampleTargets(0, 100, 5), (std::vector<int64_t>{0, 25, 50, 75, 100}));
  EXPECT_EQ(DownsampleTargets(10, 20, 3), (std::vector<int64_t>{10, 15, 20}));
  // Rounded down, and the last one is exact.
  EXPECT_EQ(DownsampleTargets(0, 10, 4), (std::vector<int64_t>{0, 3, 6, 10}));
}

TEST(DownsampleTargets, EdgeCases) {
  EXPECT_TRUE(DownsampleTargets(0, 10, 0).empty());
  EXPECT_TRUE(DownsampleTargets(0, 10, -3).empty());
  EXPECT_TRUE(DownsampleTargets(10, 0, 5).empty());
  EXPECT_EQ(DownsampleTargets(7, 7, 5), std::vector<int64_t>{7});
  EXPECT_EQ(DownsampleTargets(3, 9, 1), std::vector<int64_t>{3});
  // A range narrower than the points asked for: every step once.
  EXPECT_EQ(DownsampleTargets(0, 3, 10), (std::vector<int64_t>{0, 1, 2, 3}));
  // No overflow at the extremes of the type.
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> wide = DownsampleTargets(lo, hi, 3);
  ASSERT_EQ(wide.size(), 3u);
  EXPECT_EQ(wide.front(), lo);
  EXPECT_EQ(wide.back(), hi);
  EXPECT_TRUE(wide[0] < wide[1] && wide[1] < wide[2]);
}

TEST(DownsampleIndices, ShortSeriesIsKeptWhole) {
  EXPECT_THAT(DownsampleIndices({1, 2, 3}, 3), ElementsAre(0, 1, 2));
  EXPECT_THAT(DownsampleIndices({5, 500}, 200), ElementsAre(0, 1));
  EXPECT_TRUE(DownsampleIndices({}, 10).empty());
  EXPECT_TRUE(DownsampleIndices({1, 2}, 0).empty());
}

TEST(DownsampleIndices, LongSeriesKeepsFirstLastAndEvenSteps) {
  std::vector<int64_t> steps;
  for (int64_t s = 1; s <= 1000; ++s) steps.push_back(s * 10);  // 10, 20, ..., 10000
  std::vector<size_t> kept = DownsampleIndices(steps, 11);
  ASSERT_EQ(kept.size(), 11u);
  EXPECT_EQ(kept.front(), 0u);
  EXPECT_EQ(kept.back(), 999u);
  // Targets 10 + 999 * k: the first point at or after each.
  for (size_t k = 0; k < kept.size(); ++k) {
    int64_t target = 10 + static_cast<int64_t>(9990 * k / 10);
    EXPECT_GE(steps[kept[k]], target);
    if (kept[k] > 0) {
      EXPECT_LT(steps[kept[k] - 1], target);
    }
  }
}

TEST(DownsampleIndices, UnevenStepsYieldFewerDistinctPoints) {
  // Most points crowd the start: targets past them all land on the last point once.
  std::vector<int64_t> steps = {1, 2, 3, 4, 5, 6, 1000};
  EXPECT_THAT(DownsampleIndices(steps, 3), ElementsAre(0, 6));
  // Repeated steps: the first of equal steps is kept.
  EXPECT_THAT(DownsampleIndices({0, 0, 5, 5, 10, 10}, 3), ElementsAre(0, 2, 4));
}

}  // namespace
}  // namespace det::master::core
