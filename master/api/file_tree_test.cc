#include "master/api/file_tree.h"

#include <gtest/gtest.h>

namespace det::master::api {
namespace {

std::vector<ArchiveEntry> Context() {
  std::vector<ArchiveEntry> e(4);
  e[0].path = "train.py";
  e[0].content = "print('hi')\n";
  e[0].mtime = 1700000000;
  e[1].path = "data/";
  e[1].is_dir = true;
  e[2].path = "data/loader.py";
  e[2].content = "import os\n";
  e[3].path = "lib/deep/model.bin";  // its directories are only implied
  e[3].content = std::string("\x00\x01\x02", 3);
  return e;
}

TEST(FileTreeTest, NestsDirectoriesFirstAndImpliesMissingOnes) {
  nlohmann::json tree = FileTreeJson(Context());
  ASSERT_EQ(tree.size(), 3u);
  EXPECT_EQ(tree[0]["name"], "data");
  EXPECT_EQ(tree[0]["isDir"], true);
  EXPECT_EQ(tree[1]["name"], "lib");
  EXPECT_EQ(tree[2]["name"], "train.py");
  EXPECT_EQ(tree[2]["path"], "train.py");
  EXPECT_EQ(tree[2]["isDir"], false);
  EXPECT_EQ(tree[2]["contentLength"], 12);
  EXPECT_EQ(tree[2]["contentType"], "text/plain; charset=utf-8");
  EXPECT_EQ(tree[2]["modifiedTime"], "2023-11-14T22:13:20.000000Z");
  ASSERT_EQ(tree[0]["files"].size(), 1u);
  EXPECT_EQ(tree[0]["files"][0]["path"], "data/loader.py");
  const auto& deep = tree[1]["files"][0];
  EXPECT_EQ(deep["path"], "lib/deep");
  EXPECT_EQ(deep["isDir"], true);
  EXPECT_EQ(deep["files"][0]["path"], "lib/deep/model.bin");
  EXPECT_EQ(deep["files"][0]["contentType"], "application/octet-stream");
}

TEST(FileTreeTest, FileContentReadsFilesOnly) {
  auto ok = FileContent(Context(), "data/loader.py");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(*ok, "import os\n");
  EXPECT_EQ(FileContent(Context(), "data").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(FileContent(Context(), "nope.py").status().code(), StatusCode::kNotFound);
  auto bad = FileContent(Context(), "../etc/passwd");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("path"), std::string::npos);
  EXPECT_EQ(FileContent(Context(), "").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace det::master::api
