#include "master/server/agent_admin_service.h"

#include <gtest/gtest.h>

namespace det::master::server {
namespace {

TEST(AgentAdminServiceTest, AgentsStartEnabledAndToggle) {
  AgentAdminService s;
  EXPECT_TRUE(s.Agent("a").enabled);
  s.SetAgent("a", false, /*drain=*/true);
  EXPECT_FALSE(s.Agent("a").enabled);
  EXPECT_TRUE(s.Agent("a").draining);
  EXPECT_TRUE(s.Agent("b").enabled);
  s.SetAgent("a", false, /*drain=*/false);
  EXPECT_FALSE(s.Agent("a").draining);
  s.SetAgent("a", true, false);
  EXPECT_TRUE(s.Agent("a").enabled);
  EXPECT_FALSE(s.Agent("a").draining);
}

TEST(AgentAdminServiceTest, SlotsAreDisabledOnePerAgent) {
  AgentAdminService s;
  EXPECT_TRUE(s.SlotEnabled("a", 0));
  s.SetSlot("a", 0, false);
  EXPECT_FALSE(s.SlotEnabled("a", 0));
  EXPECT_TRUE(s.SlotEnabled("a", 1));
  EXPECT_TRUE(s.SlotEnabled("b", 0));
  s.SetSlot("a", 0, true);
  EXPECT_TRUE(s.SlotEnabled("a", 0));
}

}  // namespace
}  // namespace det::master::server
