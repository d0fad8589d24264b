#include "common/csv.h"

#include <gtest/gtest.h>

namespace det {
namespace {

TEST(Csv, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvRecord({"x", std::nullopt, "", "y,z"}), "x,,,\"y,z\"\n");
}

}  // namespace
}  // namespace det
