#include "common/whole_int64.h"

#include <gtest/gtest.h>

#include <string>

namespace det {
namespace {

TEST(WholeInt64Test, TakesTheWholeTextOrNothing) {
  EXPECT_EQ(WholeInt64("42"), 42);
  EXPECT_EQ(WholeInt64("-7"), -7);
  EXPECT_EQ(WholeInt64("007"), 7);
  EXPECT_EQ(WholeInt64(std::string("1\0junk", 6)), std::nullopt);  // "1%00junk" decoded
  for (const char* bad : {"", "+1", " 1", "1 ", "1x", "0x10", "9223372036854775808", "-"}) {
    EXPECT_EQ(WholeInt64(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(WholeInt64("9223372036854775807"), INT64_MAX);
}

}  // namespace
}  // namespace det
