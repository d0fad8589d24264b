#include "master/config/searcher_metric.h"

#include <gtest/gtest.h>

namespace det::master::config {
namespace {

using nlohmann::json;

TEST(SearcherMetricTest, ReadsNameAndDirectionFromStoredConfig) {
  SearcherMetric m = SearcherMetric::FromConfigJson(
      json{{"searcher", {{"metric", "accuracy"}, {"smaller_is_better", false}}}});
  EXPECT_EQ(m.name, "accuracy");
  EXPECT_FALSE(m.smaller_is_better);
  EXPECT_TRUE(m.Better(0.9, 0.8));
  EXPECT_FALSE(m.Better(0.8, 0.8));
}

TEST(SearcherMetricTest, MissingOrMistypedFieldsKeepDefaults) {
  SearcherMetric m = SearcherMetric::FromConfigJson(
      json{{"searcher", {{"metric", 3}, {"smaller_is_better", "no"}}}});
  EXPECT_EQ(m.name, "");
  EXPECT_TRUE(m.smaller_is_better);
  EXPECT_TRUE(SearcherMetric::FromConfigJson(json::array()).smaller_is_better);
  EXPECT_EQ(SearcherMetric::FromConfigJson(json{{"searcher", nullptr}}).name, "");
  EXPECT_TRUE(m.Better(0.1, 0.2));
}

TEST(SearcherMetricTest, ValueInReportPrefersValidationMetrics) {
  SearcherMetric m{"loss", true};
  EXPECT_EQ(m.ValueInReport(
                json{{"validation_metrics", {{"loss", 0.5}}}, {"avg_metrics", {{"loss", 9}}}}),
            0.5);
  EXPECT_EQ(m.ValueInReport(json{{"avg_metrics", {{"loss", 2}}}}), 2.0);
  EXPECT_EQ(m.ValueInReport(json{{"validation_metrics", {{"loss", "x"}}}}), std::nullopt);
  EXPECT_EQ(m.ValueInReport(json{{"validation_metrics", {{"acc", 1}}}}), std::nullopt);
  EXPECT_EQ(m.ValueIn(json{{"loss", 1}}), 1.0);
  EXPECT_EQ(SearcherMetric{}.ValueIn(json{{"", 1}}), std::nullopt);  // no metric configured
}

}  // namespace
}  // namespace det::master::config
