#include "cli/context_packer.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "common/base64.h"

namespace det::cli {
namespace {

namespace fs = std::filesystem;

class ContextPackerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/det_context_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void Write(const std::string& rel, const std::string& content) {
    fs::path p = fs::path(dir_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
  }
  std::vector<std::string> Paths(const std::string& root, const std::vector<std::string>& inc = {}) {
    Result<std::vector<ContextEntry>> entries = ListContext(root, inc);
    EXPECT_TRUE(entries.ok()) << entries.status().message();
    std::vector<std::string> out;
    if (entries.ok()) {
      for (const ContextEntry& e : *entries) {
        out.push_back(e.path + (e.type == kFileTypeDirectory ? "/" : ""));
      }
    }
    return out;
  }
  std::string dir_;
};

// Files and directories come out sorted, a directory before its contents, with built-in and
// .detignore patterns applied.
TEST_F(ContextPackerTest, WalksAndIgnores) {
  Write("ctx/train.py", "print(1)\n");
  Write("ctx/model/net.py", "x = 1\n");
  Write("ctx/model/__pycache__/net.cpython-311.pyc", "junk");
  Write("ctx/data/big.bin", "0123456789");
  Write("ctx/data/keep.txt", "k");
  Write("ctx/notes.log", "log");
  Write("ctx/.git/HEAD", "ref");
  Write("ctx/.detignore", "# data sets\n*.log\n/data/*.bin\n");
  EXPECT_EQ(Paths(dir_ + "/ctx"),
            (std::vector<std::string>{".detignore", "data/", "data/keep.txt", "model/",
                                      "model/net.py", "train.py"}));
}

// Included paths land under their base name; a clash with a root entry is an error.
TEST_F(ContextPackerTest, Includes) {
  Write("ctx/train.py", "");
  Write("lib/util.py", "u");
  Write("lib/.detignore", "*.tmp\n");
  Write("lib/x.tmp", "t");
  Write("extra.txt", "e");
  EXPECT_EQ(Paths(dir_ + "/ctx", {dir_ + "/lib", dir_ + "/extra.txt"}),
            (std::vector<std::string>{"train.py", "lib/", "lib/.detignore", "lib/util.py",
                                      "extra.txt"}));
  Write("ctx/lib/other.py", "");
  EXPECT_FALSE(ListContext(dir_ + "/ctx", {dir_ + "/lib"}).ok());
}

// Without a context directory only the includes are listed (none: an empty context).
TEST_F(ContextPackerTest, NoContextDirectory) {
  Write("lib/util.py", "u");
  Write("extra.txt", "e");
  EXPECT_EQ(Paths(""), std::vector<std::string>{});
  EXPECT_EQ(Paths("", {dir_ + "/lib", dir_ + "/extra.txt"}),
            (std::vector<std::string>{"lib/", "lib/util.py", "extra.txt"}));
  EXPECT_FALSE(ListContext(dir_ + "/missing", {}).ok());
}

// Packed files carry base64 content, permission bits and mtime as a string.
TEST_F(ContextPackerTest, PacksFiles) {
  Write("ctx/a.txt", "hello");
  chmod((dir_ + "/ctx/a.txt").c_str(), 0640);
  fs::create_directories(dir_ + "/ctx/empty");
  Result<PackedContext> packed = PackContext(dir_ + "/ctx", {});
  ASSERT_TRUE(packed.ok()) << packed.status().message();
  EXPECT_EQ(packed->total_bytes, 5u);
  EXPECT_EQ(packed->num_files, 1u);
  ASSERT_EQ(packed->files.size(), 2u);
  const nlohmann::json& f = packed->files[0];
  EXPECT_EQ(f["path"], "a.txt");
  EXPECT_EQ(f["type"], kFileTypeRegular);
  EXPECT_EQ(Base64Decode(f["content"].get<std::string>()).value(), "hello");
  EXPECT_EQ(f["mode"], 0640);
  EXPECT_TRUE(f["mtime"].is_string());
  EXPECT_GT(std::stoll(f["mtime"].get<std::string>()), 1000000000LL);
  const nlohmann::json& d = packed->files[1];
  EXPECT_EQ(d["path"], "empty");
  EXPECT_EQ(d["type"], kFileTypeDirectory);
  EXPECT_EQ(d["content"], "");
}

// A context at or above the limit fails before anything is read, naming the limit.
TEST_F(ContextPackerTest, SizeLimit) {
  Write("ctx/a.bin", std::string(100, 'x'));
  Result<PackedContext> packed = PackContext(dir_ + "/ctx", {}, 100);
  ASSERT_FALSE(packed.ok());
  EXPECT_NE(packed.status().message().find("maximum allowed size"), std::string::npos);
  EXPECT_NE(packed.status().message().find("100.0B"), std::string::npos);
  EXPECT_TRUE(PackContext(dir_ + "/ctx", {}, 101).ok());
}

// A context directory that does not exist is an error.
TEST_F(ContextPackerTest, MissingDirectory) {
  EXPECT_FALSE(ListContext(dir_ + "/nope", {}).ok());
}

}  // namespace
}  // namespace det::cli
