#include "cli/gitignore.h"

#include <gtest/gtest.h>

namespace det::cli {
namespace {

// Built-in ignores leave out Python byte code and editor/VCS directories at any depth.
TEST(GitignoreTest, BuiltinIgnores) {
  GitignoreMatcher m;
  m.AddBuiltinIgnores();
  EXPECT_TRUE(m.IsIgnored("__pycache__", true));
  EXPECT_TRUE(m.IsIgnored("pkg/__pycache__", true));
  EXPECT_TRUE(m.IsIgnored("pkg/__pycache__/mod.cpython-311.pyc", false));
  EXPECT_TRUE(m.IsIgnored("a.pyc", false));
  EXPECT_TRUE(m.IsIgnored("sub/a.pyo", false));
  EXPECT_FALSE(m.IsIgnored("a.py", false));
  EXPECT_TRUE(m.IsIgnored(".git", true));
  EXPECT_TRUE(m.IsIgnored(".git/config", false));
  EXPECT_TRUE(m.IsIgnored(".vscode", true));
  EXPECT_TRUE(m.IsIgnored(".idea", true));
  EXPECT_TRUE(m.IsIgnored(".mypy_cache", true));
  // `.git/` only matches directories.
  EXPECT_FALSE(m.IsIgnored(".git", false));
  EXPECT_FALSE(m.IsIgnored(".gitignore", false));
}

// Comments and blank lines are skipped; an escaped '#' is a literal.
TEST(GitignoreTest, CommentsAndBlankLines) {
  GitignoreMatcher m;
  m.AddPatterns("# a comment\n\n   \n\\#literal\n");
  EXPECT_EQ(m.size(), 1u);
  EXPECT_TRUE(m.IsIgnored("#literal", false));
  EXPECT_FALSE(m.IsIgnored("# a comment", false));
}

// A pattern without a slash matches the base name at any depth.
TEST(GitignoreTest, UnanchoredMatchesAnyComponent) {
  GitignoreMatcher m;
  m.AddPatterns("*.csv\ndata\n");
  EXPECT_TRUE(m.IsIgnored("x.csv", false));
  EXPECT_TRUE(m.IsIgnored("a/b/x.csv", false));
  EXPECT_TRUE(m.IsIgnored("data", true));
  EXPECT_TRUE(m.IsIgnored("data", false));
  EXPECT_TRUE(m.IsIgnored("sub/data/file.txt", false));
  EXPECT_FALSE(m.IsIgnored("x.csv.bak", false));
  EXPECT_FALSE(m.IsIgnored("database", true));
}

// A leading slash anchors the pattern at the root; a middle slash does too.
TEST(GitignoreTest, AnchoredPatterns) {
  GitignoreMatcher m;
  m.AddPatterns("/build\ndocs/*.md\n");
  EXPECT_TRUE(m.IsIgnored("build", true));
  EXPECT_TRUE(m.IsIgnored("build/out.o", false));
  EXPECT_FALSE(m.IsIgnored("src/build", true));
  EXPECT_TRUE(m.IsIgnored("docs/a.md", false));
  EXPECT_FALSE(m.IsIgnored("x/docs/a.md", false));
  // `*` does not cross a slash.
  EXPECT_FALSE(m.IsIgnored("docs/sub/a.md", false));
}

// A trailing slash matches directories only.
TEST(GitignoreTest, TrailingSlashMatchesDirectoriesOnly) {
  GitignoreMatcher m;
  m.AddPatterns("logs/\n");
  EXPECT_TRUE(m.IsIgnored("logs", true));
  EXPECT_FALSE(m.IsIgnored("logs", false));
  EXPECT_TRUE(m.IsIgnored("a/logs", true));
  EXPECT_TRUE(m.IsIgnored("a/logs/x.txt", false));
}

// Negation re-includes a path an earlier pattern excluded; the last match wins.
TEST(GitignoreTest, Negation) {
  GitignoreMatcher m;
  m.AddPatterns("*.txt\n!keep.txt\n");
  EXPECT_TRUE(m.IsIgnored("a.txt", false));
  EXPECT_FALSE(m.IsIgnored("keep.txt", false));
  EXPECT_FALSE(m.IsIgnored("sub/keep.txt", false));
  m.AddPattern("keep.txt");
  EXPECT_TRUE(m.IsIgnored("keep.txt", false));
}

// As in git, a file inside an excluded directory cannot be re-included.
TEST(GitignoreTest, NegationCannotReincludeInsideIgnoredDirectory) {
  GitignoreMatcher m;
  m.AddPatterns("data/\n!data/keep.txt\n");
  EXPECT_TRUE(m.IsIgnored("data/keep.txt", false));
}

// `**` matches any number of directories, at the start, middle or end.
TEST(GitignoreTest, DoubleStar) {
  GitignoreMatcher m;
  m.AddPatterns("**/tmp\na/**/b\nout/**\n");
  EXPECT_TRUE(m.IsIgnored("tmp", true));
  EXPECT_TRUE(m.IsIgnored("x/y/tmp", false));
  EXPECT_TRUE(m.IsIgnored("a/b", false));
  EXPECT_TRUE(m.IsIgnored("a/x/y/b", false));
  EXPECT_FALSE(m.IsIgnored("c/a/b", false));
  EXPECT_TRUE(m.IsIgnored("out/file", false));
  EXPECT_TRUE(m.IsIgnored("out/deep/file", false));
  EXPECT_FALSE(m.MatchesSelf("out", true));
}

// Character classes and `?` come from fnmatch.
TEST(GitignoreTest, CharacterClasses) {
  GitignoreMatcher m;
  m.AddPatterns("file?.[ch]\n");
  EXPECT_TRUE(m.IsIgnored("file1.c", false));
  EXPECT_TRUE(m.IsIgnored("fileX.h", false));
  EXPECT_FALSE(m.IsIgnored("file10.c", false));
  EXPECT_FALSE(m.IsIgnored("file1.o", false));
}

// Windows line ends and trailing blanks do not become part of a pattern.
TEST(GitignoreTest, CrlfAndTrailingSpaces) {
  GitignoreMatcher m;
  m.AddPatterns("big.bin  \r\nother\r\n");
  EXPECT_TRUE(m.IsIgnored("big.bin", false));
  EXPECT_TRUE(m.IsIgnored("other", false));
}

}  // namespace
}  // namespace det::cli
