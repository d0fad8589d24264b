#include "master/searcher/bracket_math.h"

#include <gtest/gtest.h>

namespace det::master::searcher {
namespace {

using V64 = std::vector<int64_t>;
using U64 = std::vector<uint64_t>;

// makeRungs vectors of reference §4.1.
TEST(BracketMathTest, MakeRungUnits) {
  EXPECT_EQ(MakeRungUnits(3, 9, 3), (U64{1, 3, 9}));
  EXPECT_EQ(MakeRungUnits(4, 10, 2), (U64{1, 2, 5, 10}));
  EXPECT_EQ(MakeRungUnits(1, 9, 3), (U64{9}));
  EXPECT_EQ(MakeRungUnits(3, 900, 3), (U64{100, 300, 900}));
  EXPECT_EQ(MakeRungUnits(3, 9000, 3), (U64{1000, 3000, 9000}));
  EXPECT_EQ(MakeRungUnits(3, 2, 4), (U64{1, 1, 2}));  // floored at 1
}

// Trials per bracket, reference §4.1 maxTrials vectors.
TEST(BracketMathTest, BracketMaxTrials) {
  EXPECT_EQ(BracketMaxTrials(20, 3, {3, 2, 1}), (V64{12, 5, 3}));
  EXPECT_EQ(BracketMaxTrials(50, 3, {4, 3}), (V64{35, 15}));
  EXPECT_EQ(BracketMaxTrials(50, 4, {3, 2}), (V64{37, 13}));
  EXPECT_EQ(BracketMaxTrials(100, 4, {4, 3, 2}), (V64{70, 22, 8}));
}

// Concurrency per bracket, reference §4.1.
TEST(BracketMathTest, BracketMaxConcurrentTrials) {
  EXPECT_EQ(BracketMaxConcurrentTrials(0, 3, {9, 3, 1}), (V64{3, 3, 3}));
  EXPECT_EQ(BracketMaxConcurrentTrials(11, 3, {9, 3, 1}), (V64{4, 4, 3}));
  EXPECT_EQ(BracketMaxConcurrentTrials(0, 4, {40, 10}), (V64{10, 10}));
  EXPECT_EQ(BracketMaxConcurrentTrials(16, 4, {70, 22, 8}), (V64{6, 5, 5}));
  EXPECT_EQ(BracketMaxConcurrentTrials(2, 4, {1, 1, 1}), (V64{1, 1, 1}));  // m = max(mct, #b)
}

// insertMetric: ascending, before equal values (ties favour the newcomer).
TEST(BracketMathTest, InsertMetric) {
  std::vector<double> a{0, 1.5, 2.1};
  EXPECT_EQ(InsertMetric(&a, 1.2), 1u);
  std::vector<double> b{0, 1.5, 2.0};
  EXPECT_EQ(InsertMetric(&b, 3.0), 3u);
  std::vector<double> c{-3, -2, -1};
  EXPECT_EQ(InsertMetric(&c, -3.4), 0u);
  std::vector<double> d;
  EXPECT_EQ(InsertMetric(&d, 7), 0u);
  std::vector<double> e{0, 1.5, 2.0};
  EXPECT_EQ(InsertMetric(&e, 1.5), 1u);
  EXPECT_EQ(e, (std::vector<double>{0, 1.5, 1.5, 2.0}));
}

// Mode tables (reference §2.4): standard(1..5) = [1],[1,2],[2,3],[2,3,4],[3,4,5].
TEST(BracketMathTest, ModeRungCounts) {
  EXPECT_EQ(*ModeRungCounts("standard", 1), (std::vector<int>{1}));
  EXPECT_EQ(*ModeRungCounts("standard", 2), (std::vector<int>{1, 2}));
  EXPECT_EQ(*ModeRungCounts("standard", 3), (std::vector<int>{2, 3}));
  EXPECT_EQ(*ModeRungCounts("standard", 4), (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(*ModeRungCounts("standard", 5), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(*ModeRungCounts("aggressive", 4), (std::vector<int>{4}));
  EXPECT_EQ(*ModeRungCounts("conservative", 3), (std::vector<int>{1, 2, 3}));
  EXPECT_FALSE(ModeRungCounts("wild", 3).ok());
}

// Quirk 2: exact integer logs. Determined's int(ln(243)/ln(3)) is 4; ours is 5 (+1 = 6 rungs).
TEST(BracketMathTest, LogRungLimitIsExactAtPowers) {
  EXPECT_EQ(LogRungLimit(243, 3), 6);
  EXPECT_EQ(LogRungLimit(1000, 10), 4);
  EXPECT_EQ(LogRungLimit(999, 10), 3);
  EXPECT_EQ(LogRungLimit(9, 3), 3);
  EXPECT_EQ(LogRungLimit(90, 3), 5);
  EXPECT_EQ(LogRungLimit(1, 4), 1);
  EXPECT_EQ(AshaMaxRungs(5, 1000, 100, 4), 4);
  EXPECT_EQ(AshaMaxRungs(5, 100, 10, 4), 2);
}

// makeBrackets vectors of reference §4.1 and the §2.4 examples.
TEST(BracketMathTest, MakeAshaBrackets) {
  auto a = *MakeAshaBrackets("standard", 5, {}, 100, 10, 2, 4);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].num_rungs, 2);
  EXPECT_EQ(a[0].max_trials, 7);
  EXPECT_EQ(a[0].max_concurrent_trials, 1);
  EXPECT_EQ(a[1].num_rungs, 1);
  EXPECT_EQ(a[1].max_trials, 3);
  EXPECT_EQ(a[1].max_concurrent_trials, 1);

  auto c = *MakeAshaBrackets("conservative", 5, {}, 1000, 10, 5, 3);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ((std::vector<int64_t>{c[0].num_rungs, c[0].max_trials, c[0].max_concurrent_trials}),
            (V64{3, 7, 2}));
  EXPECT_EQ((std::vector<int64_t>{c[1].num_rungs, c[1].max_trials, c[1].max_concurrent_trials}),
            (V64{2, 2, 2}));
  EXPECT_EQ((std::vector<int64_t>{c[2].num_rungs, c[2].max_trials, c[2].max_concurrent_trials}),
            (V64{1, 1, 1}));

  auto agg = *MakeAshaBrackets("aggressive", 5, {}, 1000, 100, 16, 4);
  ASSERT_EQ(agg.size(), 1u);
  EXPECT_EQ(agg[0].num_rungs, 4);
  EXPECT_EQ(agg[0].max_trials, 100);
  EXPECT_EQ(agg[0].max_concurrent_trials, 16);

  auto std4 = *MakeAshaBrackets("standard", 5, {}, 1000, 100, 16, 4);
  ASSERT_EQ(std4.size(), 3u);
  EXPECT_EQ((V64{std4[0].num_rungs, std4[1].num_rungs, std4[2].num_rungs}), (V64{4, 3, 2}));
  EXPECT_EQ((V64{std4[0].max_trials, std4[1].max_trials, std4[2].max_trials}), (V64{70, 22, 8}));
  EXPECT_EQ((V64{std4[0].max_concurrent_trials, std4[1].max_concurrent_trials,
                 std4[2].max_concurrent_trials}),
            (V64{6, 5, 5}));

  auto cons = *MakeAshaBrackets("conservative", 5, {}, 1000, 100, 16, 4);
  ASSERT_EQ(cons.size(), 4u);
  EXPECT_EQ((V64{cons[0].max_trials, cons[1].max_trials, cons[2].max_trials, cons[3].max_trials}),
            (V64{67, 21, 8, 4}));
  for (const auto& b : cons) EXPECT_EQ(b.max_concurrent_trials, 4);

  // Tournament example: max_time 90, d 3, max_trials 9, mct 3 -> rungs 3 and 2, trials 6 and 3.
  auto t = *MakeAshaBrackets("standard", 5, {}, 90, 9, 3, 3);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ((V64{t[0].num_rungs, t[0].max_trials, t[1].num_rungs, t[1].max_trials}),
            (V64{3, 6, 2, 3}));
}

// Quirk 3: floor-to-1 bracket counts are capped so the total never exceeds max_trials.
TEST(BracketMathTest, CapBracketTrials) {
  EXPECT_EQ(BracketMaxTrials(2, 4, {5, 4, 3, 2, 1}), (V64{1, 1, 1, 1, 1}));
  EXPECT_EQ(CapBracketTrials({1, 1, 1, 1, 1}, 2), (V64{1, 1}));
  EXPECT_EQ(CapBracketTrials({12, 5, 3}, 20), (V64{12, 5, 3}));
  auto b = *MakeAshaBrackets("standard", 5, {5, 4, 3, 2, 1}, 1000, 2, 16, 4);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].num_rungs, 5);
  EXPECT_EQ(b[1].num_rungs, 4);
}

TEST(BracketMathTest, AshaInitialTrials) {
  EXPECT_EQ(AshaInitialTrials(16, 10, 3, 3), 10);
  EXPECT_EQ(AshaInitialTrials(3, 10, 3, 3), 3);
  EXPECT_EQ(AshaInitialTrials(0, 100, 3, 3), 9);
  EXPECT_EQ(AshaInitialTrials(0, 5, 3, 3), 5);
  EXPECT_EQ(AshaInitialTrials(0, 5, 1, 3), 1);
}

}  // namespace
}  // namespace det::master::searcher
