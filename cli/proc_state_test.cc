#include "cli/proc_state.h"

#include <gtest/gtest.h>

namespace det::cli {
namespace {

TEST(StateFromProcStat, ReadsTheStateAfterTheCommandName) {
  EXPECT_EQ(StateFromProcStat("1234 (determined-mast) S 1 1234 1234 0 -1"), 'S');
  EXPECT_EQ(StateFromProcStat("1234 (determined-mast) Z 1 1234 1234 0 -1"), 'Z');
}

TEST(StateFromProcStat, CommandNamesMayHoldSpacesAndParentheses) {
  EXPECT_EQ(StateFromProcStat("77 (a) b) R 1 77"), 'R');
  EXPECT_EQ(StateFromProcStat("77 (x (y) z) D 1 77"), 'D');
}

TEST(StateFromProcStat, MalformedLinesHaveNoState) {
  EXPECT_EQ(StateFromProcStat(""), std::nullopt);
  EXPECT_EQ(StateFromProcStat("1234 (det"), std::nullopt);
  EXPECT_EQ(StateFromProcStat("1234 (det)"), std::nullopt);
  EXPECT_EQ(StateFromProcStat("1234 (det)S 1"), std::nullopt);
}

TEST(IsExitedState, OnlyZombieAndDeadCountAsExited) {
  EXPECT_TRUE(IsExitedState('Z'));
  EXPECT_TRUE(IsExitedState('X'));
  for (char live : {'R', 'S', 'D', 'T', 't', 'I', 'W', 'P'}) {
    EXPECT_FALSE(IsExitedState(live)) << live;
  }
}

}  // namespace
}  // namespace det::cli
