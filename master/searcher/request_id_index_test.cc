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

TEST(RequestIdIndexTest, LookupAgreesWithFind) {
  RequestIdIndex index;
  EXPECT_EQ(index.Lookup("x"), kNoTrial);
  EXPECT_EQ(index.Add("aaaa"), 0u);
  EXPECT_EQ(index.Add("bbbb"), 1u);
  EXPECT_EQ(index.Lookup("bbbb"), 1u);  // the id just added
  EXPECT_EQ(index.Lookup("aaaa"), 0u);  // another one
  EXPECT_EQ(index.Lookup("aaaa"), 0u);  // the one just looked up
  EXPECT_EQ(index.Lookup("cccc"), kNoTrial);
  EXPECT_EQ(index.Lookup("aaaa"), 0u);
  index.Clear();
  EXPECT_EQ(index.Lookup("aaaa"), kNoTrial);
}

TEST(RequestIdIndexTest, IdsOfOneLengthThenAnother) {
  RequestIdIndex index;
  for (int i = 0; i < 100; ++i) index.Add("id-" + std::to_string(100 + i));  // all 6 long
  EXPECT_EQ(index.id(42), "id-142");
  EXPECT_EQ(index.Add("longer-id"), 100u);
  EXPECT_EQ(index.Add("s"), 101u);
  EXPECT_EQ(index.id(42), "id-142");
  EXPECT_EQ(index.id(100), "longer-id");
  EXPECT_EQ(index.id(101), "s");
  EXPECT_EQ(index.Find("id-199"), 99u);
  EXPECT_EQ(index.Find("s"), 101u);
}

}  // namespace
}  // namespace det::master::searcher
