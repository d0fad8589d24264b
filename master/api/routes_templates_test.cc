// Who may create, change and delete a config template, as Determined's RBAC-less (basic) rules
// have it: templates have no owner, so any signed-in user may create a template and update,
// rename or delete anyone's; a trial's allocation token and an unauthenticated caller may not.
// A template's workspace must exist, on create and when an update moves it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "master/api/routes.h"
#include "master/server/master_sqlite_fixture.h"
#include "master/store/session_token.h"

namespace det::master::api {
namespace {

using nlohmann::json;
using server::HttpRequest;
using server::HttpResponse;

class RoutesTemplatesTest : public server::MasterOverSqliteTest {
 protected:
  RoutesTemplatesTest() : MasterOverSqliteTest("det_routes_templates_") {}

  void SetUp() override {
    MasterOverSqliteTest::SetUp();
    StartMaster();
    RegisterRoutes(&router_, master_.get());
    admin_ = Login("admin");
    user_ = Login("determined");
  }

  HttpResponse Call(const std::string& method, const std::string& path, const json& body,
                    const std::string& token) {
    HttpRequest req;
    req.method = method;
    req.path = req.target = path;
    req.body = body.is_null() ? "" : body.dump();
    req.remote_address = "127.0.0.1";
    if (!token.empty()) req.headers["authorization"] = "Bearer " + token;
    return router_.Dispatch(req);
  }

  std::string Login(const std::string& user) {
    HttpResponse r =
        Call("POST", "/api/v1/auth/login", json{{"username", user}, {"password", ""}}, "");
    EXPECT_EQ(r.status, 200) << r.body;
    json j = json::parse(r.body, nullptr, false);
    return j.is_object() && j.contains("token") ? j["token"].get<std::string>() : "";
  }

  static std::string ErrorOf(const HttpResponse& r) {
    json j = json::parse(r.body, nullptr, false);
    return j.is_object() && j.contains("error") ? j["error"].value("error", "") : "";
  }

  json Config(int slots) { return json{{"resources", {{"slots_per_trial", slots}}}}; }

  server::Router router_;
  std::string admin_;
  std::string user_;
};

TEST_F(RoutesTemplatesTest, AnyUserMayChangeAnyonesTemplateAsDetermined) {
  // The admin's template: a plain user updates, renames and deletes it.
  ASSERT_EQ(Call("POST", "/api/v1/templates/by-admin", json{{"config", Config(1)}}, admin_).status,
            200);
  HttpResponse r = Call("PATCH", "/api/v1/templates/by-admin", Config(2), user_);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["template"]["config"], Config(2));
  r = Call("PUT", "/api/v1/templates/by-admin", json{{"config", Config(3)}}, user_);
  ASSERT_EQ(r.status, 200) << r.body;
  r = Call("PATCH", "/api/v1/template/rename", json{{"oldName", "by-admin"}, {"newName", "b"}},
           user_);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["template"]["config"], Config(3));
  ASSERT_EQ(Call("DELETE", "/api/v1/templates/b", json(), user_).status, 200);
  EXPECT_EQ(Call("GET", "/api/v1/templates/b", json(), admin_).status, 404);

  // The user's template: the admin (and the user) may change it the same way.
  ASSERT_EQ(Call("POST", "/api/v1/templates/by-user", json{{"config", Config(1)}}, user_).status,
            200);
  EXPECT_EQ(Call("PATCH", "/api/v1/templates/by-user", Config(4), admin_).status, 200);
  EXPECT_EQ(Call("DELETE", "/api/v1/templates/by-user", json(), admin_).status, 200);
}

TEST_F(RoutesTemplatesTest, CallersWithoutAUserSessionAreRefused) {
  ASSERT_EQ(Call("POST", "/api/v1/templates/t", json{{"config", Config(1)}}, admin_).status, 200);
  for (const std::string& token : {std::string(), std::string("forged.token")}) {
    EXPECT_EQ(Call("POST", "/api/v1/templates/u", json{{"config", Config(1)}}, token).status, 401);
    EXPECT_EQ(Call("PATCH", "/api/v1/templates/t", Config(2), token).status, 401);
    EXPECT_EQ(Call("PUT", "/api/v1/templates/t", json{{"config", Config(2)}}, token).status, 401);
    EXPECT_EQ(Call("DELETE", "/api/v1/templates/t", json(), token).status, 401);
  }
  // A trial's allocation token acts for no user: it may not edit templates either.
  master_->auth()->RegisterAllocationDigest(store::AllocationTokenDigest("alloc-token"), "a.1", 1);
  HttpResponse r = Call("DELETE", "/api/v1/templates/t", json(), "alloc-token");
  EXPECT_TRUE(r.status == 401 || r.status == 403) << r.status << " " << r.body;
  HttpResponse got = Call("GET", "/api/v1/templates/t", json(), user_);
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(json::parse(got.body)["template"]["config"], Config(1));  // unchanged
}

TEST_F(RoutesTemplatesTest, TheWorkspaceMustExist) {
  HttpResponse r =
      Call("POST", "/api/v1/templates/w", json{{"config", Config(1)}, {"workspaceId", 999}}, user_);
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(ErrorOf(r), "workspace 999 not found");
  ASSERT_EQ(Call("POST", "/api/v1/templates/w", json{{"config", Config(1)}}, user_).status, 200);
  r = Call("PUT", "/api/v1/templates/w", json{{"config", Config(1)}, {"workspaceId", 999}}, user_);
  EXPECT_EQ(r.status, 404) << r.body;
  HttpResponse got = Call("GET", "/api/v1/templates/w", json(), user_);
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(json::parse(got.body)["template"]["workspaceId"], 1);
}

}  // namespace
}  // namespace det::master::api
