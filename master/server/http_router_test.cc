// Router::Match's decoding of path parameters and queries (no sockets): strict, so that an id
// such as "1%00" never reaches a handler as "1".
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "master/server/http_server.h"

namespace det::master::server {
namespace {

using nlohmann::json;

class RouterDecodingTest : public ::testing::Test {
 protected:
  RouterDecodingTest() {
    router_.Add("GET", "/api/v1/experiments/{id}", [](HttpRequest& req) {
      HttpResponse r;
      r.body = json{{"id", req.params["id"]}}.dump();
      return r;
    });
  }

  HttpResponse Get(const std::string& target) {
    HttpRequest req;
    req.method = "GET";
    req.target = target;
    size_t q = target.find('?');
    req.path = target.substr(0, q);
    if (q != std::string::npos) req.query = ParseQuery(target.substr(q + 1));
    return router_.Dispatch(req);
  }

  // The error message of a 400 answer ("" for any other).
  std::string Refusal(const std::string& target) {
    HttpResponse r = Get(target);
    if (r.status != 400) return "";
    return json::parse(r.body)["error"]["error"].get<std::string>();
  }

  Router router_;
};

TEST_F(RouterDecodingTest, PathParametersDecodeEscapes) {
  HttpResponse r = Get("/api/v1/experiments/a%20b%2Fc");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body)["id"], "a b/c");
  // '+' is itself in a path; only form-encoded queries mean a space by it.
  EXPECT_EQ(json::parse(Get("/api/v1/experiments/a+b").body)["id"], "a+b");
}

// "1%00" decoded to "1\0", which strtoll read as experiment 1.
TEST_F(RouterDecodingTest, ANulByteInAPathParameterIs400NamingItAndTheValue) {
  std::string msg = Refusal("/api/v1/experiments/1%00");
  EXPECT_NE(msg.find("path parameter 'id'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("NUL"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'1%00'"), std::string::npos) << msg;
}

TEST_F(RouterDecodingTest, MalformedEscapesInAPathParameterAre400) {
  for (const char* target : {"/api/v1/experiments/1%", "/api/v1/experiments/1%4",
                             "/api/v1/experiments/%zz", "/api/v1/experiments/%+1",
                             "/api/v1/experiments/%-1"}) {
    std::string msg = Refusal(target);
    EXPECT_NE(msg.find("malformed percent-escape"), std::string::npos) << target << ": " << msg;
    EXPECT_NE(msg.find("path parameter 'id'"), std::string::npos) << target << ": " << msg;
  }
}

TEST_F(RouterDecodingTest, AQueryThatDoesNotDecodeIs400NamingTheParameter) {
  std::string msg = Refusal("/api/v1/experiments/1?limit=5%00");
  EXPECT_NE(msg.find("query parameter 'limit'"), std::string::npos) << msg;
  msg = Refusal("/api/v1/experiments/1?x=1&name=100%");
  EXPECT_NE(msg.find("query parameter 'name'"), std::string::npos) << msg;
  EXPECT_EQ(Get("/api/v1/experiments/1?name=a%20b&x=%41").status, 200);
}

// A method or path that matches nothing stays 405/404, whatever its parameters.
TEST_F(RouterDecodingTest, UnmatchedRoutesKeepTheir404And405) {
  HttpRequest req;
  req.method = "DELETE";
  req.path = req.target = "/api/v1/experiments/1%00";
  EXPECT_EQ(router_.Dispatch(req).status, 405);
  EXPECT_EQ(Get("/api/v1/nothing/1%00").status, 404);
}

// The router fuzz smoke found it: a message quoting a non-UTF-8 path made dump() throw.
TEST(ErrorJsonTest, AMessageQuotingBytesThatAreNotUtf8IsStillJson) {
  std::string body = ErrorJson(3, "InvalidArgument", "uuid: must be a uuid (got \"a\xff\xfe\")");
  nlohmann::json parsed = nlohmann::json::parse(body);
  EXPECT_EQ(parsed["error"]["error"], "uuid: must be a uuid (got \"a\xef\xbf\xbd\xef\xbf\xbd\")");
}

}  // namespace
}  // namespace det::master::server
