#include "common/shell_quote.h"

#include <gtest/gtest.h>

namespace det {
namespace {

TEST(ShellQuoteTest, QuotesPlainAndEmptyWords) {
  EXPECT_EQ(ShellQuote("abc"), "'abc'");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("a b $HOME"), "'a b $HOME'");
}

TEST(ShellQuoteTest, EscapesSingleQuotes) { EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'"); }

TEST(ShellQuoteTest, ShReadsTheWordBack) {
  const std::string word = "x'y \"z\" $(true) `a` \\n";
  const std::string cmd = "printf %s " + ShellQuote(word);
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string got;
  char buf[256];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) got.append(buf, n);
  ASSERT_EQ(pclose(p), 0);
  EXPECT_EQ(got, word);
}

}  // namespace
}  // namespace det
