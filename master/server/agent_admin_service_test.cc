// AgentAdminService against a real SQLite store in a temp dir: the state survives a reopen.
#include "master/server/agent_admin_service.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

class AgentAdminServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det_agent_admin_test_");
    Reopen();
  }
  // A new store and service on the same database, as after a master restart.
  void Reopen() {
    service_.reset();
    store_.reset();
    auto opened = store::SqliteStore::Open((dir_ / "det.db").string());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
    service_ = std::make_unique<AgentAdminService>(store_.get());
    ASSERT_TRUE(service_->Load().ok());
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<AgentAdminService> service_;
};

TEST_F(AgentAdminServiceTest, AgentsStartEnabledAndToggle) {
  AgentAdminService& s = *service_;
  EXPECT_TRUE(s.Agent("a").enabled);
  ASSERT_TRUE(s.SetAgent("a", false, /*drain=*/true).ok());
  EXPECT_FALSE(s.Agent("a").enabled);
  EXPECT_TRUE(s.Agent("a").draining);
  EXPECT_TRUE(s.Agent("b").enabled);
  EXPECT_TRUE(s.KillingAgents().empty());  // draining: what runs stays
  ASSERT_TRUE(s.SetAgent("a", false, /*drain=*/false).ok());
  EXPECT_FALSE(s.Agent("a").draining);
  EXPECT_EQ(s.KillingAgents(), std::vector<std::string>{"a"});
  ASSERT_TRUE(s.SetAgent("a", true, false).ok());
  EXPECT_TRUE(s.Agent("a").enabled);
  EXPECT_FALSE(s.Agent("a").draining);
  EXPECT_TRUE(s.KillingAgents().empty());
}

TEST_F(AgentAdminServiceTest, SlotsAreDisabledOnePerAgent) {
  AgentAdminService& s = *service_;
  EXPECT_TRUE(s.SlotEnabled("a", 0));
  ASSERT_TRUE(s.SetSlot("a", 0, false).ok());
  EXPECT_FALSE(s.SlotEnabled("a", 0));
  EXPECT_TRUE(s.SlotEnabled("a", 1));
  EXPECT_TRUE(s.SlotEnabled("b", 0));
  using SlotList = std::vector<std::pair<std::string, int>>;
  EXPECT_EQ(s.DisabledSlots(), (SlotList{{"a", 0}}));  // the tick kills what uses it
  ASSERT_TRUE(s.SetSlot("a", 0, true).ok());
  EXPECT_TRUE(s.SlotEnabled("a", 0));
  EXPECT_TRUE(s.DisabledSlots().empty());
}

TEST_F(AgentAdminServiceTest, StateSurvivesARestart) {
  ASSERT_TRUE(service_->SetAgent("drained", false, /*drain=*/true).ok());
  ASSERT_TRUE(service_->SetAgent("disabled", false, /*drain=*/false).ok());
  ASSERT_TRUE(service_->SetAgent("back", false, false).ok());
  ASSERT_TRUE(service_->SetAgent("back", true, false).ok());
  ASSERT_TRUE(service_->SetSlot("back", 1, false).ok());
  ASSERT_TRUE(service_->SetSlot("back", 0, false).ok());
  ASSERT_TRUE(service_->SetSlot("back", 0, true).ok());
  Reopen();
  EXPECT_FALSE(service_->Agent("drained").enabled);
  EXPECT_TRUE(service_->Agent("drained").draining);
  EXPECT_FALSE(service_->Agent("disabled").enabled);
  EXPECT_FALSE(service_->Agent("disabled").draining);
  EXPECT_TRUE(service_->Agent("back").enabled);
  EXPECT_FALSE(service_->SlotEnabled("back", 1));
  EXPECT_TRUE(service_->SlotEnabled("back", 0));
  EXPECT_EQ(service_->KillingAgents(), std::vector<std::string>{"disabled"});
  EXPECT_EQ(service_->DisabledSlots(), (std::vector<std::pair<std::string, int>>{{"back", 1}}));
}

TEST_F(AgentAdminServiceTest, DisablingTwiceKeepsOneRow) {
  ASSERT_TRUE(service_->SetAgent("a", false, true).ok());
  ASSERT_TRUE(service_->SetAgent("a", false, false).ok());
  auto rows = store_->ListAgentAdminStates();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].agent_id, "a");
  EXPECT_EQ((*rows)[0].slot_id, -1);
  EXPECT_FALSE((*rows)[0].draining);
}

}  // namespace
}  // namespace det::master::server
