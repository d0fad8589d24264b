#include "cli/format.h"

#include <gtest/gtest.h>

namespace det::cli {
namespace {

// Sizes print like Determined's sizeof_fmt: "%3.1f" and a 1024-based unit.
TEST(FormatTest, Size) {
  EXPECT_EQ(FormatSize(0), "0.0B");
  EXPECT_EQ(FormatSize(512), "512.0B");
  EXPECT_EQ(FormatSize(1023), "1023.0B");
  EXPECT_EQ(FormatSize(1024), "1.0KB");
  EXPECT_EQ(FormatSize(1234), "1.2KB");
  EXPECT_EQ(FormatSize(5 * 1024 * 1024), "5.0MB");
  EXPECT_EQ(FormatSize(99614720), "95.0MB");
  EXPECT_EQ(FormatSize(3.5 * 1024 * 1024 * 1024), "3.5GB");
}

// Times are shown in UTC as "%Y-%m-%d %H:%M:%S+0000" whatever the input offset.
TEST(FormatTest, Time) {
  EXPECT_EQ(FormatTimeText("2024-01-02T03:04:05Z").value(), "2024-01-02 03:04:05+0000");
  EXPECT_EQ(FormatTimeText("2024-01-02T03:04:05.123456Z").value(), "2024-01-02 03:04:05+0000");
  EXPECT_EQ(FormatTimeText("2024-01-02T05:04:05+02:00").value(), "2024-01-02 03:04:05+0000");
  EXPECT_EQ(FormatTimeText("2024-01-01T23:30:00-01:00").value(), "2024-01-02 00:30:00+0000");
  EXPECT_FALSE(FormatTime(nlohmann::json()).has_value());
  EXPECT_FALSE(FormatTimeText("").has_value());
  EXPECT_EQ(FormatTimeText("garbage").value(), "garbage");
}

// Progress is a percentage with one decimal, or N/A.
TEST(FormatTest, Percent) {
  EXPECT_EQ(FormatPercent(nlohmann::json(0.5)), "50.0%");
  EXPECT_EQ(FormatPercent(nlohmann::json(1)), "100.0%");
  EXPECT_EQ(FormatPercent(nlohmann::json(0.12345)), "12.3%");
  EXPECT_EQ(FormatPercent(nlohmann::json()), "N/A");
}

// JSON values become cells the way Python's str() shows them.
TEST(FormatTest, JsonCell) {
  EXPECT_FALSE(JsonCell(nlohmann::json()).has_value());
  EXPECT_EQ(JsonCell(nlohmann::json(true)).value(), "True");
  EXPECT_EQ(JsonCell(nlohmann::json(false)).value(), "False");
  EXPECT_EQ(JsonCell(nlohmann::json(42)).value(), "42");
  EXPECT_EQ(JsonCell(nlohmann::json(0.123456789)).value(), "0.123457");
  EXPECT_EQ(JsonCell(nlohmann::json("x")).value(), "x");
  EXPECT_EQ(StripStatePrefix("STATE_ACTIVE"), "ACTIVE");
  EXPECT_EQ(StripStatePrefix("RUNNING"), "RUNNING");
  EXPECT_EQ(JsonInt(nlohmann::json("17")).value(), 17);
  EXPECT_EQ(JsonInt(nlohmann::json(17)).value(), 17);
  EXPECT_FALSE(JsonInt(nlohmann::json("x")).has_value());
}

}  // namespace
}  // namespace det::cli
