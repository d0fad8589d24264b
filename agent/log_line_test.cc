#include "agent/log_line.h"

#include <gtest/gtest.h>

namespace det::agent {
namespace {

TEST(ParseLogLineTest, PlainLineKeepsNewline) {
  ParsedLogLine p = ParseLogLine("hello world\n");
  EXPECT_FALSE(p.rank_id.has_value());
  EXPECT_FALSE(p.level.has_value());
  EXPECT_EQ(p.log, "hello world\n");
}

TEST(ParseLogLineTest, RankAndLevelAreStripped) {
  ParsedLogLine p = ParseLogLine("[rank=3] INFO: loss 0.5\n");
  ASSERT_TRUE(p.rank_id.has_value());
  EXPECT_EQ(*p.rank_id, 3);
  ASSERT_TRUE(p.level.has_value());
  EXPECT_EQ(*p.level, "LOG_LEVEL_INFO");
  EXPECT_EQ(p.log, "loss 0.5\n");
}

TEST(ParseLogLineTest, EveryLevel) {
  for (const char* level : {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}) {
    ParsedLogLine p = ParseLogLine(std::string(level) + ": x\n");
    ASSERT_TRUE(p.level.has_value()) << level;
    EXPECT_EQ(*p.level, std::string("LOG_LEVEL_") + level);
    EXPECT_EQ(p.log, "x\n");
  }
}

TEST(ParseLogLineTest, LevelWithoutRankAndRankWithoutLevel) {
  ParsedLogLine a = ParseLogLine("WARNING:careful\n");
  EXPECT_EQ(*a.level, "LOG_LEVEL_WARNING");
  EXPECT_EQ(a.log, "careful\n");
  ParsedLogLine b = ParseLogLine("[rank=12] step 4\n");
  EXPECT_EQ(*b.rank_id, 12);
  EXPECT_FALSE(b.level.has_value());
  EXPECT_EQ(b.log, "step 4\n");
}

TEST(ParseLogLineTest, NotPrefixesAreLeftAlone) {
  EXPECT_EQ(ParseLogLine("x INFO: y\n").log, "x INFO: y\n");
  EXPECT_FALSE(ParseLogLine("INFO y\n").level.has_value());
  EXPECT_FALSE(ParseLogLine("[rank=] a\n").rank_id.has_value());
  EXPECT_FALSE(ParseLogLine("[rank=x] a\n").rank_id.has_value());
  EXPECT_FALSE(ParseLogLine("info: a\n").level.has_value());
  // The level must come right after the rank, not later.
  ParsedLogLine p = ParseLogLine("INFO: [rank=1] a\n");
  EXPECT_FALSE(p.rank_id.has_value());
  EXPECT_EQ(p.log, "[rank=1] a\n");
}

TEST(ParseLogLineTest, EmptyMessageAfterLevel) {
  ParsedLogLine p = ParseLogLine("[rank=0] ERROR:\n");
  EXPECT_EQ(*p.rank_id, 0);
  EXPECT_EQ(*p.level, "LOG_LEVEL_ERROR");
  EXPECT_EQ(p.log, "\n");
}

TEST(LineSplitterTest, SplitsOnNewlineAndCarriageReturn) {
  LineSplitter s;
  auto lines = s.Feed("a\nb\rc\r\nd");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "a\n");
  EXPECT_EQ(lines[1], "b\n");
  EXPECT_EQ(lines[2], "c\n");
  auto rest = s.Finish();
  ASSERT_TRUE(rest.has_value());
  EXPECT_EQ(*rest, "d\n");
  EXPECT_FALSE(s.Finish().has_value());
}

TEST(LineSplitterTest, JoinsChunksAndHandlesCrLfAcrossChunks) {
  LineSplitter s;
  EXPECT_TRUE(s.Feed("hel").empty());
  auto a = s.Feed("lo\r");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0], "hello\n");
  auto b = s.Feed("\nworld\n\n");
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0], "world\n");
  EXPECT_EQ(b[1], "\n");
}

TEST(LineSplitterTest, CutsLongLines) {
  LineSplitter s(4);
  auto lines = s.Feed("abcdefg\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "abcd\n");
  EXPECT_EQ(lines[1], "efg\n");
}

}  // namespace
}  // namespace det::agent
