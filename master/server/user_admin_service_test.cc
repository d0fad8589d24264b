#include "master/server/user_admin_service.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/test_dir.h"
#include "master/server/passwords.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

class UserAdminServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det_user_admin_test_");
    auto s = store::SqliteStore::Open((dir_ / "det.db").string());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
    ASSERT_TRUE(store_->EnsureBuiltinUsers(std::nullopt).ok());  // admin = 1, determined = 2
    service_ = std::make_unique<UserAdminService>(store_.get(),
                                                  [this](int64_t id) { changed_.push_back(id); });
  }
  void TearDown() override {
    service_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  const Actor admin_{1, true};
  const Actor plain_{2, false};
  std::filesystem::path dir_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<UserAdminService> service_;
  std::vector<int64_t> changed_;
};

TEST_F(UserAdminServiceTest, AdminCreatesUsersWithPasswords) {
  UserCreate req;
  req.username = "alice";
  req.password = "s3cret-Pass";
  auto u = service_->Create(admin_, req);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  auto stored = store_->GetUserByName("alice");
  ASSERT_TRUE(stored.ok());
  EXPECT_TRUE(VerifyPassword(ClientPasswordHash("s3cret-Pass"), stored->password_hash));
  EXPECT_FALSE(stored->admin);
  EXPECT_EQ(service_->Create(admin_, req).status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(service_->Create(plain_, req).status().code(), StatusCode::kPermissionDenied);
  req.username = "has space";
  EXPECT_EQ(service_->Create(admin_, req).status().code(), StatusCode::kInvalidArgument);
  // A client hash is stored as given (hashed once more with bcrypt).
  UserCreate hashed;
  hashed.username = "bob";
  hashed.password = ClientPasswordHash("pw");
  hashed.password_is_hashed = true;
  ASSERT_TRUE(service_->Create(admin_, hashed).ok());
  EXPECT_TRUE(
      VerifyPassword(ClientPasswordHash("pw"), store_->GetUserByName("bob")->password_hash));
}

TEST_F(UserAdminServiceTest, PatchRulesAndSessionInvalidation) {
  UserPatch deactivate;
  deactivate.active = false;
  EXPECT_EQ(service_->Patch(plain_, 2, deactivate).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(service_->Patch(admin_, 1, deactivate).status().code(),
            StatusCode::kInvalidArgument);  // not themselves
  auto u = service_->Patch(admin_, 2, deactivate);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_FALSE(store_->GetUserById(2)->active);
  EXPECT_EQ(changed_, std::vector<int64_t>{2});

  UserPatch rename;
  rename.username = "admin";
  EXPECT_EQ(service_->Patch(admin_, 2, rename).status().code(), StatusCode::kAlreadyExists);
  rename.username = "det2";
  ASSERT_TRUE(service_->Patch(admin_, 2, rename).ok());
  EXPECT_EQ(store_->GetUserById(2)->username, "det2");

  UserPatch self;
  self.display_name = "Me";
  self.password = "new-Pass1";
  ASSERT_TRUE(service_->Patch(plain_, 2, self).ok());
  EXPECT_EQ(store_->GetUserById(2)->display_name, "Me");
  EXPECT_TRUE(
      VerifyPassword(ClientPasswordHash("new-Pass1"), store_->GetUserById(2)->password_hash));
  EXPECT_EQ(service_->Patch(plain_, 1, self).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(service_->Patch(admin_, 99, self).status().code(), StatusCode::kNotFound);
}

TEST(WebSettings, SizesAreBounded) {
  EXPECT_TRUE(CheckWebSettings({{"k", "", "v"}}).ok());
  Status no_key = CheckWebSettings({{"", "", "v"}});
  EXPECT_NE(no_key.message().find("settings[0].key: required"), std::string::npos);
  Status big = CheckWebSettings({{"k", "", std::string(256 * 1024 + 1, 'x')}});
  EXPECT_NE(big.message().find("settings[0].value: at most"), std::string::npos);
  EXPECT_FALSE(CheckWebSettings({{std::string(257, 'k'), "", "v"}}).ok());
  std::vector<store::UserWebSettingRow> many(1001, {"k", "", "v"});
  EXPECT_NE(CheckWebSettings(many).message().find("at most 1000 per request"), std::string::npos);
}

}  // namespace
}  // namespace det::master::server
