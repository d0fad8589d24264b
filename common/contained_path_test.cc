#include "common/contained_path.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/test_dir.h"

namespace det {
namespace {

namespace fs = std::filesystem;

TEST(LexicallyInside, ComparesWholeComponents) {
  EXPECT_TRUE(LexicallyInside("/data", "/data"));
  EXPECT_TRUE(LexicallyInside("/data/", "/data/a/b"));
  EXPECT_TRUE(LexicallyInside("/data", "/data/a/../b"));
  EXPECT_TRUE(LexicallyInside("/", "/etc"));
  EXPECT_FALSE(LexicallyInside("/data", "/data2"));
  EXPECT_FALSE(LexicallyInside("/data", "/data/../etc"));
  EXPECT_FALSE(LexicallyInside("/data/a", "/data"));
}

TEST(ResolveInside, KeepsPathsInsideTheirRoot) {
  fs::path root = testing::FreshTestDir("contained_") / "storage";
  fs::create_directories(root / "a");
  auto in = ResolveInside(root, "a/new", "uuid");
  ASSERT_TRUE(in.ok()) << in.status().message();
  EXPECT_EQ(*in, fs::weakly_canonical(root) / "a" / "new");
  EXPECT_TRUE(ResolveInside(root, root / "a", "x").ok());
  // A name holding an encoded slash is one component, not a way up.
  auto encoded = ResolveInside(root, "..%2F..%2Fetc", "uuid");
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(encoded->parent_path(), fs::weakly_canonical(root));
}

TEST(ResolveInside, RefusesDotDotAbsoluteAndSymlinkEscapes) {
  fs::path dir = testing::FreshTestDir("contained_");
  fs::path root = dir / "storage";
  fs::create_directories(root);
  fs::create_directories(dir / "secret");
  fs::create_directory_symlink(dir / "secret", root / "link");
  fs::create_directory_symlink(root / "..", root / "up");

  for (const fs::path& bad : {fs::path(".."), fs::path("../secret"), fs::path("a/../../secret"),
                              fs::path("/etc/passwd"), fs::path("link"), fs::path("link/x"),
                              fs::path("up/secret"), dir / "storage2"}) {
    auto r = ResolveInside(root, bad, "checkpoint");
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(r.status().message().find("checkpoint: "), std::string::npos);
      EXPECT_NE(r.status().message().find("outside " + root.string()), std::string::npos)
          << r.status().message();
    }
  }
}

TEST(ResolveInside, ARootThatIsALinkIsResolvedToo) {
  fs::path dir = testing::FreshTestDir("contained_");
  fs::create_directories(dir / "real" / "a");
  fs::create_directory_symlink(dir / "real", dir / "alias");
  EXPECT_TRUE(ResolveInside(dir / "alias", "a", "x").ok());
  EXPECT_TRUE(ResolveInside(dir / "alias", dir / "real" / "a", "x").ok());
}

}  // namespace
}  // namespace det
