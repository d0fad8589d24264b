#include "cli/auth_cache.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

namespace det::cli {
namespace {

namespace fs = std::filesystem;

class AuthCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/det_auth_cache_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/determined/auth.json";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string dir_;
  std::string path_;
};

// Tokens written for a master read back after a reload, in Determined's layout.
TEST_F(AuthCacheTest, RoundTrip) {
  AuthCache cache(path_);
  cache.Load();  // missing file: empty
  EXPECT_FALSE(cache.ActiveUser("http://m:8080").has_value());
  cache.SetToken("http://m:8080", "determined", "tok1");
  cache.SetActiveUser("http://m:8080", "determined");
  cache.SetToken("http://other:1", "admin", "tok2");
  ASSERT_TRUE(cache.Save().ok());

  struct stat st;
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  AuthCache again(path_);
  again.Load();
  EXPECT_EQ(again.ActiveUser("http://m:8080").value(), "determined");
  EXPECT_EQ(again.Token("http://m:8080", "determined").value(), "tok1");
  EXPECT_EQ(again.Token("http://other:1", "admin").value(), "tok2");
  EXPECT_FALSE(again.Token("http://m:8080", "admin").has_value());
  const nlohmann::json& data = again.data();
  EXPECT_EQ(data["masters"]["http://m:8080"]["active_user"], "determined");
  EXPECT_EQ(data["masters"]["http://m:8080"]["tokens"]["determined"], "tok1");
}

// Dropping the active user's token clears the active user too.
TEST_F(AuthCacheTest, DropUser) {
  AuthCache cache(path_);
  cache.SetToken("http://m", "u", "t");
  cache.SetActiveUser("http://m", "u");
  cache.DropUser("http://m", "u");
  EXPECT_FALSE(cache.Token("http://m", "u").has_value());
  EXPECT_FALSE(cache.ActiveUser("http://m").has_value());
  cache.DropUser("http://unknown", "u");  // no-op
}

TEST_F(AuthCacheTest, UsersWithTokensOfOneMaster) {
  AuthCache cache(path_);
  EXPECT_TRUE(cache.Users("http://m").empty());
  cache.SetToken("http://m", "zed", "t1");
  cache.SetToken("http://m", "amy", "t2");
  cache.SetToken("http://other", "bob", "t3");
  EXPECT_EQ(cache.Users("http://m"), (std::vector<std::string>{"amy", "zed"}));
  cache.DropUser("http://m", "amy");
  EXPECT_EQ(cache.Users("http://m"), (std::vector<std::string>{"zed"}));
}

// A corrupt file reads as empty, and unknown keys survive a rewrite.
TEST_F(AuthCacheTest, CorruptAndUnknownKeys) {
  fs::create_directories(fs::path(path_).parent_path());
  { std::ofstream(path_) << "{not json"; }
  AuthCache corrupt(path_);
  corrupt.Load();
  EXPECT_FALSE(corrupt.ActiveUser("http://m").has_value());

  { std::ofstream(path_) << R"({"version": 1, "extra": 5, "masters": {}})"; }
  AuthCache cache(path_);
  cache.Load();
  cache.SetToken("http://m", "u", "t");
  ASSERT_TRUE(cache.Save().ok());
  AuthCache again(path_);
  again.Load();
  EXPECT_EQ(again.data()["extra"], 5);
  EXPECT_EQ(again.Token("http://m", "u").value(), "t");
}

// The default path follows $XDG_CONFIG_HOME, else ~/.config.
TEST_F(AuthCacheTest, DefaultPath) {
  const char* old_xdg = getenv("XDG_CONFIG_HOME");
  std::string saved = old_xdg ? old_xdg : "";
  setenv("XDG_CONFIG_HOME", dir_.c_str(), 1);
  EXPECT_EQ(DefaultAuthCachePath(), dir_ + "/determined/auth.json");
  unsetenv("XDG_CONFIG_HOME");
  const char* home = getenv("HOME");
  if (home != nullptr) {
    EXPECT_EQ(DefaultAuthCachePath(), std::string(home) + "/.config/determined/auth.json");
  }
  if (old_xdg != nullptr) setenv("XDG_CONFIG_HOME", saved.c_str(), 1);
}

}  // namespace
}  // namespace det::cli
