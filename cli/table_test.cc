#include "cli/table.h"

#include <gtest/gtest.h>

namespace det::cli {
namespace {

// Presto layout: numbers right-aligned, strings left-aligned, columns at least header + 2
// wide, ` | ` between columns, `-+-` in the separator, trailing blanks trimmed.
TEST(TableTest, PrestoBasic) {
  std::string out = RenderPresto({"ID", "Owner", "State"},
                                 {{"1", "determined", "ACTIVE"}, {"12", "admin", std::nullopt}});
  EXPECT_EQ(out,
            "   ID | Owner      | State\n"
            "------+------------+---------\n"
            "    1 | determined | ACTIVE\n"
            "   12 | admin      |");
}

// A table without rows is a header and a separator.
TEST(TableTest, PrestoEmpty) {
  EXPECT_EQ(RenderPresto({"ID", "Name"}, {}),
            " ID   | Name\n"
            "------+--------");
}

// Floats line up on the decimal point; a column with any non-number is text.
TEST(TableTest, PrestoDecimalAlignmentAndMixedColumns) {
  std::string out = RenderPresto({"v", "w"}, {{"1.5", "1"}, {"10.25", "x"}, {"3", "2"}});
  EXPECT_EQ(out,
            "     v | w\n"
            "-------+-----\n"
            "  1.5  | 1\n"
            " 10.25 | x\n"
            "  3    | 2");
}

// Missing cells do not make a column text; a column of only missing cells is text.
TEST(TableTest, PrestoMissingCells) {
  std::string out = RenderPresto({"Parent ID", "N"}, {{std::nullopt, "5"}, {std::nullopt, std::nullopt}});
  EXPECT_EQ(out,
            " Parent ID   |   N\n"
            "-------------+-----\n"
            "             |   5\n"
            "             |");
}

// A cell with newlines spans several lines; the other cells stay on the first.
TEST(TableTest, PrestoMultiline) {
  std::string out = RenderPresto({"ID", "H"}, {{"1", "{\n  \"a\": 1\n}"}});
  EXPECT_EQ(out,
            "   ID | H\n"
            "------+----------\n"
            "    1 | {\n"
            "      |   \"a\": 1\n"
            "      | }");
}

// What tabulate counts as a number.
TEST(TableTest, IsTableNumber) {
  EXPECT_TRUE(IsTableNumber("1"));
  EXPECT_TRUE(IsTableNumber("-1"));
  EXPECT_TRUE(IsTableNumber("1.5"));
  EXPECT_TRUE(IsTableNumber("1e-3"));
  EXPECT_TRUE(IsTableNumber("inf"));
  EXPECT_FALSE(IsTableNumber(""));
  EXPECT_FALSE(IsTableNumber("50.0%"));
  EXPECT_FALSE(IsTableNumber("True"));
  EXPECT_FALSE(IsTableNumber("0x10"));
  EXPECT_FALSE(IsTableNumber(" 1"));
  EXPECT_FALSE(IsTableNumber("2024-01-01 00:00:00+0000"));
}

// CSV quotes only what needs quoting and leaves missing cells empty.
TEST(TableTest, Csv) {
  EXPECT_EQ(RenderCsv({"a", "b"}, {{"1", std::nullopt}, {"x,y", "say \"hi\""}}),
            "a,b\n1,\n\"x,y\",\"say \"\"hi\"\"\"\n");
}

}  // namespace
}  // namespace det::cli
