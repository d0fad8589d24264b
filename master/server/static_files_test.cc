#include "master/server/static_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "master/server/master_config.h"

namespace det::master::server {
namespace {

namespace fs = std::filesystem;

TEST(SafeJoinTest, JoinsPlainPaths) {
  EXPECT_EQ(SafeJoin("/srv/ui", "index.html"), "/srv/ui/index.html");
  EXPECT_EQ(SafeJoin("/srv/ui/", "assets/a-1.js"), "/srv/ui/assets/a-1.js");
  EXPECT_EQ(SafeJoin("/srv/ui", "a//b/./c"), "/srv/ui/a/b/c");
  EXPECT_EQ(SafeJoin("/srv/ui", ""), "/srv/ui");
}

TEST(SafeJoinTest, RejectsEscapes) {
  EXPECT_EQ(SafeJoin("/srv/ui", "../etc/passwd"), std::nullopt);
  EXPECT_EQ(SafeJoin("/srv/ui", "assets/../../x"), std::nullopt);
  EXPECT_EQ(SafeJoin("/srv/ui", ".."), std::nullopt);
  EXPECT_EQ(SafeJoin("/srv/ui", "a\\..\\b"), std::nullopt);
  EXPECT_EQ(SafeJoin("/srv/ui", "%2e%2e/x"), std::nullopt);
  EXPECT_EQ(SafeJoin("/srv/ui", std::string("a\0b", 3)), std::nullopt);
  // An absolute path stays below the root.
  EXPECT_EQ(SafeJoin("/srv/ui", "/etc/passwd"), "/srv/ui/etc/passwd");
}

TEST(ContentTypeTest, ByExtension) {
  EXPECT_EQ(ContentTypeFor("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(ContentTypeFor("assets/index-AbC.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(ContentTypeFor("assets/index-AbC.CSS"), "text/css; charset=utf-8");
  EXPECT_EQ(ContentTypeFor("logo.svg"), "image/svg+xml");
  EXPECT_EQ(ContentTypeFor("favicon.ico"), "image/x-icon");
  EXPECT_EQ(ContentTypeFor("blob"), "application/octet-stream");
}

TEST(CacheControlTest, HashedAssetsForAYear) {
  EXPECT_EQ(CacheControlFor("assets/index-1a2b.js"), "public, max-age=31536000, immutable");
  EXPECT_EQ(CacheControlFor("/assets/x.css"), "public, max-age=31536000, immutable");
  EXPECT_EQ(CacheControlFor("index.html"), "no-cache");
  EXPECT_EQ(CacheControlFor("experiments/3"), "no-cache");
}

class ServeWebUiFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("webui_test_" + std::to_string(::getpid()));
    fs::create_directories(root_ / "assets");
    Write(root_ / "index.html", "<html>app</html>");
    Write(root_ / "assets" / "index-1a2b.js", "console.log(1)");
    Write(root_.parent_path() / ("secret_" + std::to_string(::getpid())), "secret");
  }
  void TearDown() override {
    fs::remove_all(root_);
    fs::remove(root_.parent_path() / ("secret_" + std::to_string(::getpid())));
  }
  static void Write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
  static std::string Header(const HttpResponse& r, const std::string& name) {
    for (const auto& [k, v] : r.headers) {
      if (k == name) return v;
    }
    return "";
  }
  fs::path root_;
};

TEST_F(ServeWebUiFileTest, ServesFilesWithTypeAndCache) {
  HttpResponse r = ServeWebUiFile(root_.string(), "assets/index-1a2b.js");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "console.log(1)");
  EXPECT_EQ(r.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(Header(r, "Cache-Control"), "public, max-age=31536000, immutable");
}

TEST_F(ServeWebUiFileTest, UnknownPagesGetIndexHtml) {
  for (const char* path : {"", "experiments/7", "experiments/7/trials/9", "login"}) {
    HttpResponse r = ServeWebUiFile(root_.string(), path);
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.body, "<html>app</html>") << path;
    EXPECT_EQ(r.content_type, "text/html; charset=utf-8") << path;
    EXPECT_EQ(Header(r, "Cache-Control"), "no-cache") << path;
  }
}

TEST_F(ServeWebUiFileTest, MissingAssetIs404NotHtml) {
  HttpResponse r = ServeWebUiFile(root_.string(), "assets/old-bundle.js");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("no such web UI file"), std::string::npos);
}

TEST_F(ServeWebUiFileTest, DotDotNeverLeavesTheRoot) {
  std::string secret = "../secret_" + std::to_string(::getpid());
  HttpResponse r = ServeWebUiFile(root_.string(), secret);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body.find("secret\""), std::string::npos);
  EXPECT_NE(r.body, "secret");
}

TEST_F(ServeWebUiFileTest, NotBuiltSaysSo) {
  HttpResponse r = ServeWebUiFile("", "experiments");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("make build"), std::string::npos);
}

TEST(RouterPrefixTest, PrefixRoutesTakeEverythingBelowWhenNothingElseMatches) {
  Router router;
  router.Add("GET", "/det/exact", [](HttpRequest&) {
    HttpResponse r;
    r.body = "exact";
    return r;
  });
  router.AddPrefix("GET", "/det", [](HttpRequest& req) {
    HttpResponse r;
    r.body = "prefix:" + req.path;
    return r;
  });
  auto get = [&](const std::string& method, const std::string& path) {
    HttpRequest req;
    req.method = method;
    req.path = path;
    return router.Dispatch(req);
  };
  EXPECT_EQ(get("GET", "/det/exact").body, "exact");
  EXPECT_EQ(get("GET", "/det/a/b/c").body, "prefix:/det/a/b/c");
  EXPECT_EQ(get("GET", "/det").body, "prefix:/det");
  EXPECT_EQ(get("GET", "/detx").status, 404);
  EXPECT_EQ(get("POST", "/det/a").status, 405);
}

TEST(WebUiDirConfigTest, MasterYamlKeyIsMadeAbsolute) {
  MasterConfig config;
  config.data_dir = (fs::temp_directory_path() / "webui_cfg_test").string();
  ASSERT_TRUE(ApplyMasterYaml("webui_dir: some/../ui\n", &config).ok());
  EXPECT_EQ(config.webui_dir, "some/../ui");
  ASSERT_TRUE(FinalizeMasterConfig(&config).ok());
  EXPECT_EQ(config.webui_dir, (fs::current_path() / "ui").string());
  MasterConfig bad;
  EXPECT_FALSE(ApplyMasterYaml("webui_dir: [1]\n", &bad).ok());
}

}  // namespace
}  // namespace det::master::server
