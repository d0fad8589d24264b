// AuthService over a real SQLite store in a temp dir, with a fake clock.
#include "master/server/auth_service.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include "common/test_dir.h"
#include "master/server/password_verifications.h"
#include "master/server/passwords.h"
#include "master/store/session_token.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

namespace fs = std::filesystem;

class AuthServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det-auth-service-");
    auto opened = store::SqliteStore::Open((dir_ / "determined.db").string());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
    auth_ = std::make_unique<AuthService>(store_.get(), &clock_);
  }
  void TearDown() override {
    auth_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }

  std::string LoginOk(const std::string& user, const std::string& password) {
    auto r = auth_->Login(user, ClientPasswordHash(password));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->first : "";
  }

  fs::path dir_;
  FakeClock clock_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<AuthService> auth_;
};

TEST_F(AuthServiceTest, BuiltinUsersLogInWithTheirBlankPasswordOnLoopback) {
  ASSERT_TRUE(auth_->EnsureBuiltinUsers(std::nullopt, "127.0.0.1").ok());
  std::string token = LoginOk("admin", "");
  Result<Principal> who = auth_->AuthenticateUserToken(token);
  ASSERT_TRUE(who.ok()) << who.status().ToString();
  EXPECT_EQ(who->username, "admin");
  EXPECT_TRUE(who->admin);
  EXPECT_FALSE(who->is_allocation);
  auto wrong = auth_->Login("admin", ClientPasswordHash("guess"));
  EXPECT_EQ(wrong.status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(auth_->Login("nobody", "").status().code(), StatusCode::kUnauthenticated);
  Result<std::vector<store::UserRow>> users = auth_->ListUsers();
  ASSERT_TRUE(users.ok());
  EXPECT_EQ(users->size(), 2u);
}

TEST_F(AuthServiceTest, NonLoopbackAddressNeedsPasswordsOnBuiltinUsers) {
  Status st = auth_->EnsureBuiltinUsers(std::nullopt, "0.0.0.0");
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("blank password"), std::string::npos) << st.message();
}

TEST_F(AuthServiceTest, InitialPasswordIsSetOnAFreshStore) {
  ASSERT_TRUE(auth_->EnsureBuiltinUsers(std::string("s3cret"), "0.0.0.0").ok());
  EXPECT_EQ(auth_->Login("admin", "").status().code(), StatusCode::kUnauthenticated);
  LoginOk("determined", "s3cret");
}

TEST_F(AuthServiceTest, SessionsRevokedOutsideTheServiceEndWithinAMinute) {
  ASSERT_TRUE(auth_->EnsureBuiltinUsers(std::nullopt, "127.0.0.1").ok());
  std::string token = LoginOk("determined", "");
  ASSERT_TRUE(auth_->AuthenticateUserToken(token).ok());
  // Revoked behind the service's back (a database edit): the cached session still answers...
  ASSERT_TRUE(store_->RevokeSession(token).ok());
  EXPECT_TRUE(auth_->AuthenticateUserToken(token).ok());
  // ...and no longer once the cache entry is older than a minute.
  clock_.Advance(60ll * 1000000 + 1);
  EXPECT_FALSE(auth_->AuthenticateUserToken(token).ok());
}

TEST_F(AuthServiceTest, SessionsExpireAfterTheirLifetimeEvenWhenCached) {
  AuthOptions options;
  options.session_lifetime_micros = 30ll * 1000000;  // shorter than the cache's minute
  auth_ = std::make_unique<AuthService>(store_.get(), &clock_, options);
  ASSERT_TRUE(auth_->EnsureBuiltinUsers(std::nullopt, "127.0.0.1").ok());
  std::string token = LoginOk("determined", "");
  ASSERT_TRUE(auth_->AuthenticateUserToken(token).ok());
  clock_.Advance(29ll * 1000000);
  EXPECT_TRUE(auth_->AuthenticateUserToken(token).ok());
  clock_.Advance(2ll * 1000000);
  Result<Principal> expired = auth_->AuthenticateUserToken(token);
  EXPECT_EQ(expired.status().code(), StatusCode::kUnauthenticated);
}

TEST_F(AuthServiceTest, DeactivationEndsCachedSessionsAtOnce) {
  ASSERT_TRUE(auth_->EnsureBuiltinUsers(std::nullopt, "127.0.0.1").ok());
  std::string token = LoginOk("determined", "");
  Result<Principal> who = auth_->AuthenticateUserToken(token);
  ASSERT_TRUE(who.ok());
  // What UserAdminService does on a change: the row changes, then the service forgets.
  Result<store::UserRow> row = store_->GetUserById(who->user_id);
  ASSERT_TRUE(row.ok());
  row->active = false;
  ASSERT_TRUE(store_->UpdateUser(*row).ok());
  auth_->ForgetUserSessions(who->user_id);
  EXPECT_EQ(auth_->AuthenticateUserToken(token).status().code(), StatusCode::kPermissionDenied);
}

TEST_F(AuthServiceTest, RepeatedFailedLoginsAreThrottledPerUserAndAddress) {
  ASSERT_TRUE(auth_->EnsureBuiltinUsers(std::nullopt, "127.0.0.1").ok());
  for (int i = 0; i < 5; ++i) {
    auto r = auth_->Login("admin", ClientPasswordHash("guess"), "10.0.0.1");
    EXPECT_EQ(r.status().code(), StatusCode::kUnauthenticated);
  }
  int64_t retry = 0;
  auto throttled = auth_->Login("admin", ClientPasswordHash(""), "10.0.0.1", &retry);
  EXPECT_EQ(throttled.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(retry, 1);
  EXPECT_EQ(throttled.status().message(),
            "too many failed logins for user 'admin' from client address 10.0.0.1; retry in 1 s");
  // The guesser's failures do not lock admin out from another address.
  EXPECT_TRUE(auth_->Login("admin", ClientPasswordHash(""), "10.0.0.2").ok());
  // After the wait, the right password works and clears the count.
  clock_.Advance(1000001);
  EXPECT_TRUE(auth_->Login("admin", ClientPasswordHash(""), "10.0.0.1").ok());
  EXPECT_TRUE(auth_->Login("admin", ClientPasswordHash(""), "10.0.0.1").ok());
}

TEST_F(AuthServiceTest, AStrangersFailuresDoNotLockAUserOutFromHerOwnAddress) {
  ASSERT_TRUE(auth_->EnsureBuiltinUsers(std::nullopt, "127.0.0.1").ok());
  // bob's address guesses alice's (here: admin's) password until throttled for her...
  for (int i = 0; i < 12; ++i) (void)auth_->Login("admin", ClientPasswordHash("x"), "10.9.9.9");
  EXPECT_EQ(auth_->Login("admin", ClientPasswordHash(""), "10.9.9.9").status().code(),
            StatusCode::kResourceExhausted);
  // ...and she still logs in from hers, again and again.
  for (int i = 0; i < 3; ++i) {
    auto mine = auth_->Login("admin", ClientPasswordHash(""), "10.1.1.1");
    EXPECT_TRUE(mine.ok()) << mine.status().ToString();
  }
}

TEST_F(AuthServiceTest, OneAddressGuessingAcrossUsernamesIsThrottledByTheAddress) {
  ASSERT_TRUE(auth_->EnsureBuiltinUsers(std::nullopt, "127.0.0.1").ok());
  for (int i = 0; i < 5; ++i) {
    auto r = auth_->Login("user" + std::to_string(i), ClientPasswordHash("x"), "10.0.0.7");
    EXPECT_EQ(r.status().code(), StatusCode::kUnauthenticated);
  }
  int64_t retry = 0;
  auto by_address = auth_->Login("determined", ClientPasswordHash(""), "10.0.0.7", &retry);
  EXPECT_EQ(by_address.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(by_address.status().message().find("client address 10.0.0.7"), std::string::npos);
  EXPECT_EQ(retry, 1);
  // Logging in to an account of its own does not reset the address's count.
  clock_.Advance(1000001);
  EXPECT_TRUE(auth_->Login("determined", ClientPasswordHash(""), "10.0.0.7").ok());
  (void)auth_->Login("user99", ClientPasswordHash("x"), "10.0.0.7");
  EXPECT_EQ(auth_->Login("determined", ClientPasswordHash(""), "10.0.0.7").status().code(),
            StatusCode::kResourceExhausted);
  // Other addresses are not affected.
  EXPECT_TRUE(auth_->Login("determined", ClientPasswordHash(""), "10.0.0.8").ok());
}

TEST_F(AuthServiceTest, AnUnknownUsernameCostsTheSameBcryptCheckAsAKnownOne) {
  ASSERT_TRUE(auth_->EnsureBuiltinUsers(std::nullopt, "127.0.0.1").ok());
  (void)DummyPasswordHash();  // made once, before counting
  uint64_t before = PasswordVerifications();
  EXPECT_EQ(auth_->Login("nobody", ClientPasswordHash("x"), "10.0.0.1").status().code(),
            StatusCode::kUnauthenticated);
  EXPECT_EQ(PasswordVerifications() - before, 1u);
  before = PasswordVerifications();
  EXPECT_EQ(auth_->Login("admin", ClientPasswordHash("x"), "10.0.0.1").status().code(),
            StatusCode::kUnauthenticated);
  EXPECT_EQ(PasswordVerifications() - before, 1u);
  // A blank stored password (admin's here) is checked at the same cost too.
  before = PasswordVerifications();
  EXPECT_TRUE(auth_->Login("admin", ClientPasswordHash(""), "10.0.0.1").ok());
  EXPECT_EQ(PasswordVerifications() - before, 1u);
  // The dummy hash is bcrypt of the cost real hashes have.
  Result<std::string> real = BcryptHash(ClientPasswordHash("pw"));
  ASSERT_TRUE(real.ok());
  EXPECT_EQ(DummyPasswordHash().substr(0, 7), real->substr(0, 7));  // "$2b$10$"
  EXPECT_EQ(DummyPasswordHash().size(), real->size());
}

TEST_F(AuthServiceTest, AnEndedAllocationsTokenIsRefused) {
  auth_->RegisterAllocationDigest(store::AllocationTokenDigest("tok-run"), "3.r1.1", 9);
  ASSERT_TRUE(auth_->AuthenticateAllocationToken("tok-run").ok());
  auth_->EndAllocationDigest(store::AllocationTokenDigest("tok-run"));
  Result<Principal> ended = auth_->AuthenticateAllocationToken("tok-run");
  EXPECT_EQ(ended.status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(ended.status().message(),
            "allocation 3.r1.1 has ended; its allocation token is no longer valid");
}

TEST_F(AuthServiceTest, LogoutRevokesAtOnce) {
  ASSERT_TRUE(auth_->EnsureBuiltinUsers(std::nullopt, "127.0.0.1").ok());
  std::string token = LoginOk("admin", "");
  ASSERT_TRUE(auth_->AuthenticateUserToken(token).ok());
  ASSERT_TRUE(auth_->Logout(token).ok());
  EXPECT_FALSE(auth_->AuthenticateUserToken(token).ok());
  EXPECT_FALSE(auth_->AuthenticateUserToken("not-a-token").ok());
}

TEST_F(AuthServiceTest, UsersChangeOnlyTheirOwnPasswordUnlessAdmin) {
  ASSERT_TRUE(auth_->EnsureBuiltinUsers(std::nullopt, "127.0.0.1").ok());
  Result<Principal> user = auth_->AuthenticateUserToken(LoginOk("determined", ""));
  Result<Principal> admin = auth_->AuthenticateUserToken(LoginOk("admin", ""));
  ASSERT_TRUE(user.ok() && admin.ok());
  EXPECT_EQ(auth_->SetPassword(*user, admin->user_id, ClientPasswordHash("x")).code(),
            StatusCode::kPermissionDenied);
  ASSERT_TRUE(auth_->SetPassword(*user, user->user_id, ClientPasswordHash("mine")).ok());
  EXPECT_FALSE(auth_->Login("determined", ClientPasswordHash("")).ok());
  LoginOk("determined", "mine");
  ASSERT_TRUE(auth_->SetPassword(*admin, user->user_id, "").ok());  // back to blank
  LoginOk("determined", "");
}

TEST_F(AuthServiceTest, AllocationTokensAuthenticateFromMemoryThenFromTheStore) {
  auth_->RegisterAllocationDigest(store::AllocationTokenDigest("tok-live"), "1.abc.1", 7);
  Result<Principal> live = auth_->AuthenticateAllocationToken("tok-live");
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  EXPECT_TRUE(live->is_allocation);
  EXPECT_EQ(live->allocation_id, "1.abc.1");
  EXPECT_EQ(live->trial_id, 7);
  EXPECT_EQ(live->token, "tok-live");
  EXPECT_EQ(auth_->AuthenticateAllocationToken("unknown").status().code(),
            StatusCode::kUnauthenticated);
  // The digest itself authenticates nothing.
  EXPECT_EQ(
      auth_->AuthenticateAllocationToken(store::AllocationTokenDigest("tok-live")).status().code(),
      StatusCode::kUnauthenticated);

  // An allocation stored by an earlier master run, never registered with this service.
  ASSERT_TRUE(auth_->EnsureBuiltinUsers(std::nullopt, "127.0.0.1").ok());
  store::ExperimentRow exp;
  exp.state = "ACTIVE";
  exp.config = nlohmann::json::object();
  exp.owner_id = 1;
  exp.job_id = "job";
  Result<int64_t> exp_id = store_->InsertExperiment(exp, "");
  ASSERT_TRUE(exp_id.ok()) << exp_id.status().ToString();
  store::TrialRow trial;
  trial.experiment_id = *exp_id;
  trial.request_id = "r1";
  trial.state = "ACTIVE";
  trial.task_id = std::to_string(*exp_id) + ".r1";
  Result<int64_t> trial_id = store_->InsertTrial(trial);
  ASSERT_TRUE(trial_id.ok()) << trial_id.status().ToString();
  store::AllocationRow row;
  row.allocation_id = trial.task_id + ".1";
  row.task_id = trial.task_id;
  row.trial_id = *trial_id;
  row.state = "RUNNING";
  row.token = store::AllocationTokenDigest("tok-old");  // the store keeps the digest only
  ASSERT_TRUE(store_->UpsertAllocation(row).ok());
  Result<Principal> old = auth_->AuthenticateAllocationToken("tok-old");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->allocation_id, row.allocation_id);
  EXPECT_EQ(old->trial_id, *trial_id);
  EXPECT_EQ(auth_->AuthenticateAllocationToken(row.token).status().code(),
            StatusCode::kUnauthenticated);

  // One that ended in an earlier run is refused.
  row.allocation_id = trial.task_id + ".2";
  row.state = "TERMINATED";
  row.token = store::AllocationTokenDigest("tok-ended");
  row.end_time = 1;
  ASSERT_TRUE(store_->UpsertAllocation(row).ok());
  EXPECT_EQ(auth_->AuthenticateAllocationToken("tok-ended").status().code(),
            StatusCode::kUnauthenticated);
}

}  // namespace
}  // namespace det::master::server
