#include "cli/model_render.h"

#include <gtest/gtest.h>

namespace det::cli {
namespace {

using json = nlohmann::json;

TEST(ModelRenderTest, PythonDatetimeDropsSubSeconds) {
  EXPECT_EQ(PythonDatetime(json("2026-11-23T22:14:05.123456Z")), "2026-11-23 22:14:05+00:00");
  EXPECT_EQ(PythonDatetime(json("2026-11-23T22:14:05Z"), 'T'), "2026-11-23T22:14:05+00:00");
  EXPECT_EQ(PythonDatetime(json(nullptr)), std::nullopt);
}

TEST(ModelRenderTest, DescribeTableAsDeterminedPrintsIt) {
  json m = {{"id", 3},
            {"name", "mnist"},
            {"description", ""},
            {"workspaceId", 1},
            {"creationTime", "2026-11-23T22:14:05.123456Z"},
            {"lastUpdatedTime", "2026-11-23T22:14:05Z"},
            {"metadata", {{"a", 1}}}};
  std::string table = RenderPresto(ModelDescribeHeaders(), {ModelDescribeRow(m)});
  EXPECT_EQ(table,
            "   ID | Name   | Description   |   Workspace ID | Creation Time             "
            "| Last Updated Time         | Metadata\n"
            "------+--------+---------------+----------------+---------------------------"
            "+---------------------------+------------\n"
            "    3 | mnist  |               |              1 | 2026-11-23 22:14:05+00:00 "
            "| 2026-11-23 22:14:05+00:00 | {\n"
            "      |        |               |                |                           "
            "|                           |     \"a\": 1\n"
            "      |        |               |                |                           "
            "|                           | }");
}

TEST(ModelRenderTest, VersionRowShowsTrialStepsAndMetrics) {
  json v = {
      {"version", 2},
      {"checkpoint",
       {{"uuid", "u"},
        {"metadata", {{"steps_completed", 8}}},
        {"training", {{"trialId", 5}, {"validationMetrics", {{"avgMetrics", {{"loss", 0.5}}}}}}}}}};
  TableRow row = ModelVersionRow(v);
  ASSERT_EQ(row.size(), 6u);
  EXPECT_EQ(row[0], "2");
  EXPECT_EQ(row[1], "5");
  EXPECT_EQ(row[2], "8");
  EXPECT_EQ(row[3], "u");
  EXPECT_EQ(row[4], "{\n  \"avgMetrics\": {\n    \"loss\": 0.5\n  },\n  \"batchMetrics\": null\n}");
  EXPECT_EQ(row[5], "{\n  \"steps_completed\": 8\n}");
  json summary = ModelSummaryJson({{"name", "m"}, {"id", 1}, {"archived", true}});
  EXPECT_EQ(summary["archived"], true);
  EXPECT_TRUE(summary["creation_time"].is_null());
}

}  // namespace
}  // namespace det::cli
