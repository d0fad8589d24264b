#include "master/searcher/request_id_index.h"

#include <gtest/gtest.h>

#include <string>

namespace det::master::searcher {
namespace {

TEST(RequestIdIndexTest, HandlesAreDenseInOrderOfFirstAdd) {
  RequestIdIndex index;
  EXPECT_EQ(index.Find("a"), kNoTrial);
  EXPECT_EQ(index.Add("b"), 0u);
  EXPECT_EQ(index.Add("a"), 1u);
  EXPECT_EQ(index.Add("b"), 0u);  // known id: same handle, nothing added
  EXPECT_EQ(index.size(), 2u);
  EXPECT_EQ(index.Find("a"), 1u);
  EXPECT_EQ(index.id(0), "b");
  EXPECT_EQ(index.Find(""), kNoTrial);
}

TEST(RequestIdIndexTest, ManyIdsSurviveGrowth) {
  RequestIdIndex index;
  for (int i = 0; i < 20000; ++i) {
    ASSERT_EQ(index.Add("id-" + std::to_string(i)), static_cast<TrialHandle>(i));
  }
  for (int i = 0; i < 20000; ++i) {
    ASSERT_EQ(index.Find("id-" + std::to_string(i)), static_cast<TrialHandle>(i));
    ASSERT_EQ(index.id(static_cast<TrialHandle>(i)), "id-" + std::to_string(i));
  }
  EXPECT_EQ(index.Find("id-20000"), kNoTrial);
  index.Clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.Find("id-1"), kNoTrial);
  EXPECT_EQ(index.Add("id-1"), 0u);
}

}  // namespace
}  // namespace det::master::searcher
