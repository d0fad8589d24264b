#include "common/archive.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/base64.h"

namespace det {
namespace {

// Ensures a tar.gz round-trips files and directories with their contents and modes.
TEST(ArchiveTest, RoundTrip) {
  std::vector<ArchiveEntry> in = {{"dir", true, "", 0755, 1},
                                  {"dir/a.txt", false, "hello", 0644, 2},
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

// One ustar header (and the entry's data, padded) for a hand-made tar: a hostile archive holds
// what CreateTarGz would never write.
std::string TarEntry(const std::string& name, char type, const std::string& data = "",
                     const std::string& link = "", const char* size_field = nullptr) {
  std::string h(512, '\0');
  auto put = [&h](size_t off, size_t len, const std::string& v) {
    h.replace(off, std::min(len, v.size()), v.substr(0, len));
  };
  char num[32];
  put(0, 100, name);
  put(100, 8, "0000644");
  put(108, 8, "0000000");
  put(116, 8, "0000000");
  std::snprintf(num, sizeof(num), "%011o", static_cast<unsigned>(data.size()));
  if (size_field != nullptr) {
    h.replace(124, 12, std::string(size_field, 12));
  } else {
    put(124, 12, num);
  }
  put(136, 12, "00000000000");
  h[156] = type;
  put(157, 100, link);
  put(257, 6, std::string("ustar\0", 6));
  put(263, 2, "00");
  put(148, 8, "        ");
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  std::snprintf(num, sizeof(num), "%06o", sum);
  put(148, 7, std::string(num) + '\0');
  std::string out = h + data;
  out.append((512 - data.size() % 512) % 512, '\0');
  return out;
}

std::string Tar(const std::vector<std::string>& entries) {
  std::string out;
  for (const auto& e : entries) out += e;
  return out + std::string(1024, '\0');
}

class HostileArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("det_hostile_archive_" + std::to_string(getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "dest");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  // Refused by both readers, with an error holding `want`; nothing lands outside dest.
  void ExpectRefused(const std::string& tar, const std::string& want) {
    Result<std::vector<ArchiveEntry>> read = ReadArchive(tar);
    ASSERT_FALSE(read.ok());
    EXPECT_NE(read.status().message().find(want), std::string::npos) << read.status().message();
    Status st = ExtractTarGz(tar, (root_ / "dest").string());
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find(want), std::string::npos) << st.message();
    for (const auto& e : std::filesystem::directory_iterator(root_)) {
      EXPECT_EQ(e.path().filename(), "dest") << "written outside the target: " << e.path();
    }
  }

  std::filesystem::path root_;
};

TEST_F(HostileArchiveTest, RefusesEachHostileEntryNamingItAndTheRule) {
  ExpectRefused(Tar({TarEntry("../escape.txt", '0', "x")}),
                "archive entry '../escape.txt': '..' components are not allowed");
  ExpectRefused(Tar({TarEntry("a/../../escape.txt", '0', "x")}), "'a/../../escape.txt'");
  ExpectRefused(Tar({TarEntry((root_ / "abs.txt").string(), '0', "x")}),
                "absolute paths are not allowed");
  ExpectRefused(Tar({TarEntry("link", '2', "", "../../etc")}),
                "archive entry 'link' is a symbolic link (to '../../etc'): only regular files "
                "and directories are allowed");
  ExpectRefused(Tar({TarEntry("f", '0', "x"), TarEntry("hard", '1', "", "/etc/passwd")}),
                "archive entry 'hard' is a hard link (to '/etc/passwd')");
  ExpectRefused(Tar({TarEntry("dev", '3')}), "archive entry 'dev' is a character device");
  ExpectRefused(Tar({TarEntry("blk", '4')}), "'blk' is a block device");
  ExpectRefused(Tar({TarEntry("pipe", '6')}), "'pipe' is a fifo");
  // A header declaring 4 TiB (a base-256 size field) with no data behind it: refused before
  // anything is allocated or written.
  std::string tib("\x80\0\0\0\0\0\x04\0\0\0\0\0", 12);
  ExpectRefused(Tar({TarEntry("bomb", '0', "", "", tib.c_str())}), "archive entry 'bomb' declares");
  std::string tar = Tar({TarEntry("bomb", '0', "", "", tib.c_str())});
  EXPECT_NE(ReadArchive(tar).status().message().find(
                "declares 4398046511104 bytes: the archive would expand past its limit"),
            std::string::npos)
      << ReadArchive(tar).status().message();
}

TEST_F(HostileArchiveTest, LimitsBoundTheWholeArchive) {
  std::string tar =
      Tar({TarEntry("a", '0', std::string(600, 'a')), TarEntry("b", '0', std::string(600, 'b'))});
  ArchiveLimits small{.max_total_bytes = 1000};
  EXPECT_TRUE(ReadArchive(tar).ok());
  Result<std::vector<ArchiveEntry>> read = ReadArchive(tar, small);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("archive entry 'b' declares 600 bytes"), std::string::npos)
      << read.status().message();
  ArchiveLimits one{.max_entries = 1};
  EXPECT_FALSE(ExtractTarGz(tar, (root_ / "dest").string(), one).ok());
}

TEST_F(HostileArchiveTest, NeverWritesThroughASymlinkInTheTarget) {
  namespace fs = std::filesystem;
  fs::create_directories(root_ / "outside");
  fs::create_directory_symlink(root_ / "outside", root_ / "dest" / "sub");
  Status st = ExtractTarGz(Tar({TarEntry("sub/x.txt", '0', "x")}), (root_ / "dest").string());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("is a symbolic link; refusing to write through it"),
            std::string::npos)
      << st.message();
  EXPECT_FALSE(fs::exists(root_ / "outside" / "x.txt"));
  fs::create_symlink(root_ / "outside" / "y.txt", root_ / "dest" / "y.txt");
  EXPECT_FALSE(ExtractTarGz(Tar({TarEntry("y.txt", '0', "y")}), (root_ / "dest").string()).ok());
  EXPECT_FALSE(fs::exists(root_ / "outside" / "y.txt"));
}

TEST_F(HostileArchiveTest, DropsSetuidBitsAndKeepsGoodEntries) {
  namespace fs = std::filesystem;
  std::string e = TarEntry("tool", '0', "#!/bin/sh\n");
  e.replace(100, 7, "0004755");  // setuid; fix the checksum below
  std::string h = e.substr(0, 512);
  h.replace(148, 8, "        ");
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  char num[16];
  std::snprintf(num, sizeof(num), "%06o", sum);
  e.replace(148, 7, std::string(num) + '\0');
  ASSERT_TRUE(ExtractTarGz(Tar({TarEntry("d", '5'), e}), (root_ / "dest").string()).ok());
  auto perms = fs::status(root_ / "dest" / "tool").permissions();
  EXPECT_EQ(perms & fs::perms::set_uid, fs::perms::none);
  EXPECT_NE(perms & fs::perms::owner_exec, fs::perms::none);
  EXPECT_TRUE(fs::is_directory(root_ / "dest" / "d"));
}

TEST(Base64Test, RoundTrip) {
  for (const std::string& s :
       std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    Result<std::string> d = Base64Decode(Base64Encode(s));
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(*d, s);
  }
  EXPECT_EQ(Base64Encode("hello"), "aGVsbG8=");
  EXPECT_FALSE(Base64Decode("abc").ok());
}

}  // namespace
}  // namespace det
