#include "master/api/validation_history.h"

#include <gtest/gtest.h>

namespace det::master::api {
namespace {

std::vector<int64_t> Times(const std::vector<ValidationPoint>& v) {
  std::vector<int64_t> out;
  for (const auto& p : v) out.push_back(p.report_time);
  return out;
}

TEST(ValidationHistory, KeepsOnlyImprovementsInTimeOrder) {
  std::vector<ValidationPoint> pts = {
      {2, 30, 0.5}, {1, 10, 0.9}, {1, 20, 0.95}, {2, 40, 0.5}, {1, 50, 0.1}};
  auto smaller = ValidationHistory(pts, true);
  EXPECT_EQ(Times(smaller), (std::vector<int64_t>{10, 30, 50}));  // 0.5 again is no improvement
  EXPECT_EQ(smaller[1].trial_id, 2);
  auto larger = ValidationHistory(pts, false);
  EXPECT_EQ(Times(larger), (std::vector<int64_t>{10, 20}));
}

TEST(ValidationHistory, Empty) { EXPECT_TRUE(ValidationHistory({}, true).empty()); }

}  // namespace
}  // namespace det::master::api
