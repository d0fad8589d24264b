// AgentCredentialService against a real SQLite store: the cluster secret, the id binding, and
// the binding surviving a master restart.
#include "master/server/agent_credential_service.h"

#include <gtest/gtest.h>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

class AgentCredentialServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det_agent_cred_");
    Open();
  }
  void Open() {
    service_.reset();
    store_.reset();
    auto opened = store::SqliteStore::Open((dir_ / "determined.db").string());
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    store_ = std::move(opened).value();
    service_ = std::make_unique<AgentCredentialService>(store_.get(), &clock_, "s3cret");
  }

  std::filesystem::path dir_;
  FakeClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<AgentCredentialService> service_;
};

TEST_F(AgentCredentialServiceTest, WithoutASecretEverythingIsAccepted) {
  AgentCredentialService open(store_.get(), &clock_, "");
  EXPECT_FALSE(open.enabled());
  EXPECT_TRUE(open.Authenticate("a", "", "", true).ok());
  EXPECT_TRUE(open.Authenticate("a", "", "", false).ok());
}

TEST_F(AgentCredentialServiceTest, MissingOrWrongSecretIsUnauthenticated) {
  Status none = service_->Authenticate("agent-1", "", "key-a", true);
  EXPECT_EQ(none.code(), StatusCode::kUnauthenticated);
  EXPECT_NE(none.message().find("agent 'agent-1'"), std::string::npos) << none.message();
  EXPECT_NE(none.message().find("--agent-token-file"), std::string::npos) << none.message();
  Status wrong = service_->Authenticate("agent-1", "guess", "key-a", true);
  EXPECT_EQ(wrong.code(), StatusCode::kUnauthenticated);
  EXPECT_NE(wrong.message().find("wrong agent secret"), std::string::npos) << wrong.message();
  Status nokey = service_->Authenticate("agent-1", "s3cret", "", true);
  EXPECT_EQ(nokey.code(), StatusCode::kUnauthenticated);
  // Nothing was bound by the refused requests.
  EXPECT_EQ(store_->GetAgentCredential("agent-1").status().code(), StatusCode::kNotFound);
}

TEST_F(AgentCredentialServiceTest, AnIdIsBoundToTheKeyThatRegisteredIt) {
  // Polling before registering is refused.
  EXPECT_EQ(service_->Authenticate("agent-1", "s3cret", "key-a", false).code(),
            StatusCode::kPermissionDenied);
  ASSERT_TRUE(service_->Authenticate("agent-1", "s3cret", "key-a", true).ok());
  EXPECT_TRUE(service_->Authenticate("agent-1", "s3cret", "key-a", false).ok());
  EXPECT_TRUE(service_->Authenticate("agent-1", "s3cret", "key-a", true).ok());  // re-register
  // Another agent with the cluster secret cannot take the id over, poll or post as it.
  Status takeover = service_->Authenticate("agent-1", "s3cret", "key-b", true);
  EXPECT_EQ(takeover.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(takeover.message().find("bound to another agent's credential"), std::string::npos);
  EXPECT_EQ(service_->Authenticate("agent-1", "s3cret", "key-b", false).code(),
            StatusCode::kPermissionDenied);
  // It registers its own id.
  EXPECT_TRUE(service_->Authenticate("agent-2", "s3cret", "key-b", true).ok());
  // The store holds a digest, never the key.
  auto stored = store_->GetAgentCredential("agent-1");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(*stored, AgentCredentialService::Digest("key-a"));
  EXPECT_EQ(stored->find("key-a"), std::string::npos);
}

TEST_F(AgentCredentialServiceTest, TheBindingSurvivesARestart) {
  ASSERT_TRUE(service_->Authenticate("agent-1", "s3cret", "key-a", true).ok());
  Open();
  EXPECT_EQ(service_->Authenticate("agent-1", "s3cret", "key-b", true).code(),
            StatusCode::kPermissionDenied);
  EXPECT_TRUE(service_->Authenticate("agent-1", "s3cret", "key-a", false).ok());
  // An operator who deletes the binding lets the id register with a new key.
  ASSERT_TRUE(store_->DeleteAgentCredential("agent-1").ok());
  Open();
  EXPECT_TRUE(service_->Authenticate("agent-1", "s3cret", "key-b", true).ok());
  EXPECT_EQ(store_->DeleteAgentCredential("nobody").code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace det::master::server
