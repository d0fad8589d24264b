#include "master/webhooks/match.h"

#include <gtest/gtest.h>

namespace det::master::webhooks {
namespace {

using nlohmann::json;

store::WebhookRow Hook(int64_t id, std::string name, std::string mode,
                       std::optional<int64_t> workspace) {
  store::WebhookRow w;
  w.id = id;
  w.name = std::move(name);
  w.mode = std::move(mode);
  w.workspace_id = workspace;
  return w;
}

TEST(MatchTest, WorkspaceModeHearsItsWorkspaceOrEverything) {
  ExperimentWebhooks none;
  EXPECT_TRUE(Reaches(Hook(1, "", "WORKSPACE", std::nullopt), &none, 7));
  EXPECT_TRUE(Reaches(Hook(1, "", "WORKSPACE", 7), &none, 7));
  EXPECT_FALSE(Reaches(Hook(1, "", "WORKSPACE", 8), &none, 7));
  EXPECT_TRUE(Reaches(Hook(1, "", "WORKSPACE", std::nullopt), nullptr, 7));  // a task's log
}

TEST(MatchTest, SpecificModeHearsOnlyExperimentsNamingIt) {
  ExperimentWebhooks by_id = ExperimentWebhooksOf(
      {{"integrations", {{"webhooks", {{"webhook_id", json::array({2, 3})}}}}}});
  ExperimentWebhooks by_name = ExperimentWebhooksOf(
      {{"integrations", {{"webhooks", {{"webhook_name", json::array({"specific"})}}}}}});
  ExperimentWebhooks none;
  store::WebhookRow w = Hook(3, "specific", "SPECIFIC", 5);
  EXPECT_TRUE(Reaches(w, &by_id, 5));
  EXPECT_TRUE(Reaches(w, &by_name, 5));
  EXPECT_FALSE(Reaches(w, &by_id, 6));  // its workspace is 5
  EXPECT_FALSE(Reaches(w, &none, 5));
  EXPECT_FALSE(Reaches(w, nullptr, 5));
}

TEST(MatchTest, ExcludeOptsOut) {
  ExperimentWebhooks ex = ExperimentWebhooksOf(
      {{"integrations", {{"webhooks", {{"exclude", true}, {"webhook_id", json::array({1})}}}}}});
  EXPECT_TRUE(ex.exclude);
  EXPECT_FALSE(Reaches(Hook(1, "", "WORKSPACE", std::nullopt), &ex, 1));
  std::vector<store::WebhookRow> all = {Hook(1, "a", "SPECIFIC", std::nullopt)};
  EXPECT_TRUE(CustomTargets(all, ex, 1).empty());
}

TEST(MatchTest, CustomTargetsAreTheNamedOnesOfTheWorkspaceOrGlobal) {
  std::vector<store::WebhookRow> all = {Hook(1, "a", "SPECIFIC", std::nullopt),
                                        Hook(2, "b", "SPECIFIC", 9), Hook(3, "c", "SPECIFIC", 4),
                                        Hook(4, "d", "SPECIFIC", 4)};
  ExperimentWebhooks e;
  e.ids = {1, 2, 3};
  e.names = {"c", "zzz"};
  std::vector<const store::WebhookRow*> got = CustomTargets(all, e, 4);
  ASSERT_EQ(got.size(), 2u);  // 2 is another workspace's; 3 named twice counts once
  EXPECT_EQ(got[0]->id, 1);
  EXPECT_EQ(got[1]->id, 3);
}

}  // namespace
}  // namespace det::master::webhooks
