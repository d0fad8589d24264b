#include "cli/checkpoint_render.h"

#include <gtest/gtest.h>

namespace det::cli {
namespace {

using json = nlohmann::json;

json Checkpoints() {
  return json::parse(R"([
    {"uuid": "aaaa", "state": "STATE_COMPLETED", "metadata": {"steps_completed": 100},
     "resources": {"model.pt": "2048", "metadata.json": "48"},
     "training": {"trialId": 1, "experimentConfig": {"searcher": {"metric": "loss"}},
                  "validationMetrics": {"avgMetrics": {"loss": 0.25, "acc": 0.9}}}},
    {"uuid": "bbbb", "state": "STATE_DELETED", "metadata": {"steps_completed": 200},
     "resources": {}, "training": {"trialId": 2,
                  "validationMetrics": {"avgMetrics": {"loss": 0.125}}}}])");
}

TEST(CheckpointRenderTest, ListTable) {
  std::string out = RenderPresto(CheckpointListHeaders(), CheckpointListRows(Checkpoints(), false));
  EXPECT_EQ(out,
            "   Trial ID |   # of Batches | State     |   Validation Metric | UUID   | Resources"
            "     | Size\n"
            "------------+----------------+-----------+---------------------+--------+----------"
            "-----+--------\n"
            "          1 |            100 | COMPLETED |               0.25  | aaaa   | metadata."
            "json | 2.0KB\n"
            "            |                |           |                     |        | model.pt      |\n"
            "          2 |            200 | DELETED   |               0.125 | bbbb   |           "
            "    | 0.0B");
}

TEST(CheckpointRenderTest, MissingMetricKeepsPythonStr) {
  json cps = Checkpoints();
  cps.push_back(json::parse(R"({"uuid": "cccc", "state": "STATE_COMPLETED", "metadata": {},
      "training": {"trialId": 3}})"));
  std::vector<TableRow> rows = CheckpointListRows(cps, false);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0][3], "0.25");
  EXPECT_EQ(rows[2][3], "");
  EXPECT_EQ(rows[2][1], std::nullopt);
  EXPECT_EQ(rows[2][5], "");
  EXPECT_EQ(rows[2][6], "");
}

TEST(CheckpointRenderTest, DescribeRow) {
  json c = Checkpoints()[0];
  c["reportTime"] = "2024-01-02T03:04:05Z";
  c["training"]["experimentId"] = 7;
  TableRow row = CheckpointDescribeRow(c);
  ASSERT_EQ(row.size(), CheckpointDescribeHeaders().size());
  EXPECT_EQ(row[0], "7");
  EXPECT_EQ(row[1], "1");
  EXPECT_EQ(row[2], "100");
  EXPECT_EQ(row[3], "2024-01-02 03:04:05+0000");
  EXPECT_EQ(row[4], "aaaa");
  EXPECT_EQ(row[6], "{\n    \"steps_completed\": 100\n}");
}

TEST(CheckpointRenderTest, PythonNumbers) {
  EXPECT_EQ(PythonNumberText(json(1.0)), "1.0");
  EXPECT_EQ(PythonNumberText(json(0.5)), "0.5");
  EXPECT_EQ(PythonNumberText(json(3)), "3");
  EXPECT_EQ(PythonNumberText(json(nullptr)), "None");
}

}  // namespace
}  // namespace det::cli
