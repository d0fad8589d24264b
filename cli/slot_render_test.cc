#include "cli/slot_render.h"

#include <gtest/gtest.h>

namespace det::cli {
namespace {

using json = nlohmann::json;

// Two agents listed out of order; agent-b has 11 slots so that "10" sorts after "2".
json Agents() {
  json b_slots = json::object();
  for (int i = 0; i < 11; ++i) {
    b_slots[std::to_string(i)] = {{"id", std::to_string(i)},
                                  {"enabled", true},
                                  {"draining", false},
                                  {"container", nullptr},
                                  {"device", {{"type", "TYPE_CUDA"}, {"brand", "H100"}}}};
  }
  b_slots["3"]["enabled"] = false;
  b_slots["4"]["draining"] = true;
  b_slots["5"]["container"] = {{"id", "foreign-container"}};
  b_slots["6"]["container"] = {{"id", "hidden"}, {"permissionDenied", true}};
  b_slots["7"]["container"] = {{"id", "determined-master-deployment-abc"}};
  b_slots["8"]["device"]["type"] = "TYPE_ROCM";
  b_slots["9"]["device"] = {{"brand", "?"}};
  json a_slots = {{"0",
                   {{"id", "0"},
                    {"enabled", true},
                    {"draining", false},
                    {"container", {{"id", "alloc-1"}, {"state", "STATE_RUNNING"}}},
                    {"device", {{"type", "TYPE_CPU"}, {"brand", "AMD EPYC"}}}}}};
  return {{"agents",
           {{{"id", "agent-b"}, {"resourcePools", {"gpu", "spare"}}, {"slots", b_slots}},
            {{"id", "agent-a"}, {"resourcePools", {"default"}}, {"slots", a_slots}}}}};
}

json Tasks() {
  return json::parse(R"js({"allocationIdToSummary": {"alloc-1": {
    "allocationId": "alloc-1", "name": "Trial 1 (Experiment 1)",
    "resources": [{"containerId": "alloc-1", "allocationId": "alloc-1"}]}}})js");
}

TEST(SlotRenderTest, RowsByAgentThenNumericSlotWithHolders) {
  std::vector<SlotListRow> rows = SlotListRows(Agents(), Tasks());
  ASSERT_EQ(rows.size(), 12u);
  EXPECT_EQ(rows[0].agent_id, "agent-a");
  EXPECT_EQ(rows[0].resource_pools, "default");
  EXPECT_EQ(rows[0].allocation_id, "alloc-1");
  EXPECT_EQ(rows[0].task_name, "Trial 1 (Experiment 1)");
  EXPECT_EQ(rows[0].type, "cpu");
  EXPECT_EQ(rows[0].device, "AMD EPYC");
  std::vector<std::string> ids;
  for (size_t i = 1; i < rows.size(); ++i) ids.push_back(rows[i].slot_id);
  EXPECT_EQ(ids,
            (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}));
  const SlotListRow& free = rows[1];
  EXPECT_EQ(free.resource_pools, "gpu, spare");
  EXPECT_EQ(free.allocation_id, "FREE");
  EXPECT_EQ(free.task_name, "FREE");
  EXPECT_EQ(free.type, "cuda");
  EXPECT_FALSE(rows[4].enabled);
  EXPECT_TRUE(rows[5].draining);
  EXPECT_EQ(rows[6].allocation_id, "OCCUPIED");
  EXPECT_EQ(rows[6].task_name, "Non-Determined Task: foreign-container");
  EXPECT_EQ(rows[7].task_name, "NO PERMISSIONS");
  EXPECT_EQ(rows[8].task_name, "Determined System Task: determined-master-deployment-abc");
  EXPECT_EQ(rows[9].type, "rocm");
  EXPECT_EQ(rows[10].type, "unknown");
}

TEST(SlotRenderTest, TableAndJsonInDeterminedsShape) {
  std::vector<SlotListRow> rows = SlotListRows(Agents(), Tasks());
  EXPECT_EQ(SlotListHeaders().size(), 9u);
  std::string table = RenderPresto(SlotListHeaders(), SlotListTable({rows[0]}));
  EXPECT_NE(table.find(" Agent ID   | Resource Pool   |   Slot ID | Enabled   | Draining   |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| True      | False      | alloc-1"), std::string::npos) << table;
  json j = SlotListJson({rows[0]});
  EXPECT_EQ(j, json::parse(R"js([{"agent_id": "agent-a", "resource_pools": "default",
    "slot_id": "0", "enabled": true, "draining": false, "allocation_id": "alloc-1",
    "task_name": "Trial 1 (Experiment 1)", "type": "cpu", "device": "AMD EPYC"}])js"));
}

TEST(SlotRenderTest, MissingOrMistypedFieldsReadAsAbsent) {
  EXPECT_TRUE(SlotListRows(json(), json()).empty());
  EXPECT_TRUE(SlotListRows(json{{"agents", "x"}}, json::array()).empty());
  json agents = {{"agents", {{{"id", "a"}, {"slots", {{"0", {{"container", {{"id", "c"}}}}}}}}}}};
  std::vector<SlotListRow> rows = SlotListRows(agents, json{{"allocationIdToSummary", 3}});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].slot_id, "0");
  EXPECT_TRUE(rows[0].enabled);
  EXPECT_EQ(rows[0].allocation_id, "OCCUPIED");
  EXPECT_EQ(rows[0].type, "unknown");
}

}  // namespace
}  // namespace det::cli
