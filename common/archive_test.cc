#include "common/archive.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/base64.h"

namespace det {
namespace {

// Ensures a tar.gz round-trips files and directories with their contents and modes.
TEST(ArchiveTest, RoundTrip) {
  std::vector<ArchiveEntry> in = {{"dir", true, "", 0755, 1}, {"dir/a.txt", false, "hello", 0644, 2},
                                  {"b.sh", false, std::string(100000, 'x'), 0755, 3}};
  Result<std::string> tgz = CreateTarGz(in);
  ASSERT_TRUE(tgz.ok()) << tgz.status().ToString();
  Result<std::vector<ArchiveEntry>> out = ReadArchive(*tgz);
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[1].path, "dir/a.txt");
  EXPECT_EQ((*out)[1].content, "hello");
  EXPECT_EQ((*out)[2].content.size(), 100000u);
  EXPECT_EQ((*out)[2].mode, 0755u);
}

TEST(ArchiveTest, RejectsUnsafePaths) {
  EXPECT_FALSE(IsSafeRelativePath("../x"));
  EXPECT_FALSE(IsSafeRelativePath("/etc/passwd"));
  EXPECT_FALSE(IsSafeRelativePath("a/../../b"));
  EXPECT_TRUE(IsSafeRelativePath("a/b.txt"));
  EXPECT_FALSE(CreateTarGz({{"../evil", false, "x", 0644, 0}}).ok());
}

TEST(ArchiveTest, ExtractsUnderTarget) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("det_archive_test_" + std::to_string(getpid()));
  fs::remove_all(dir);
  Result<std::string> tgz = CreateTarGz({{"sub/f.txt", false, "data", 0600, 0}});
  ASSERT_TRUE(tgz.ok());
  ASSERT_TRUE(ExtractTarGz(*tgz, dir.string()).ok());
  std::ifstream f(dir / "sub/f.txt");
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_EQ(ss.str(), "data");
  fs::remove_all(dir);
}

TEST(Base64Test, RoundTrip) {
  for (const std::string& s : std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    Result<std::string> d = Base64Decode(Base64Encode(s));
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(*d, s);
  }
  EXPECT_EQ(Base64Encode("hello"), "aGVsbG8=");
  EXPECT_FALSE(Base64Decode("abc").ok());
}

}  // namespace
}  // namespace det
