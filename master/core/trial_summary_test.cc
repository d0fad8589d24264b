#include "master/core/trial_summary.h"

#include <gtest/gtest.h>

namespace det::master::core {
namespace {

using nlohmann::json;

TEST(TrialSummaryTest, GroupKeysAreDeterminedsLegacyNames) {
  EXPECT_EQ(SummaryKeyOfGroup("training"), "avg_metrics");
  EXPECT_EQ(SummaryKeyOfGroup("validation"), "validation_metrics");
  EXPECT_EQ(SummaryKeyOfGroup("inference"), "inference");
}

TEST(TrialSummaryTest, AveragesOfReportPrefersValidationMetrics) {
  EXPECT_EQ(AveragesOfReport(json{{"avg_metrics", {{"a", 1}}}}), (json{{"a", 1}}));
  EXPECT_EQ(AveragesOfReport(json{{"validation_metrics", {{"v", 2}}}}), (json{{"v", 2}}));
  EXPECT_EQ(AveragesOfReport(json{{"avg_metrics", 3}}), json::object());
  EXPECT_EQ(AveragesOfReport(json::array()), json::object());
}

TEST(TrialSummaryTest, NumbersKeepCountSumMinMaxMeanLast) {
  json s = SummaryOfReports({json{{"loss", 4}}, json{{"loss", 1.0}}, json{{"loss", 2.5}}});
  const json& loss = s["loss"];
  EXPECT_EQ(loss["type"], "number");
  EXPECT_EQ(loss["count"], 3);
  EXPECT_DOUBLE_EQ(loss["sum"].get<double>(), 7.5);
  EXPECT_DOUBLE_EQ(loss["min"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(loss["max"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(loss["mean"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(loss["last"].get<double>(), 2.5);
}

TEST(TrialSummaryTest, LastIsNullForANameTheLatestReportLacks) {
  json s = SummaryOfReports({json{{"a", 1}, {"b", 2}}, json{{"b", 3}}});
  EXPECT_TRUE(s["a"]["last"].is_null());
  EXPECT_EQ(s["a"]["count"], 1);
  EXPECT_EQ(s["b"]["last"], 3);
  EXPECT_EQ(s["b"]["count"], 2);
}

TEST(TrialSummaryTest, NonNumbersKeepOnlyTypeAndLast) {
  json s = SummaryOfReports({json{{"when", "2024-01-02T03:04:05.123+00:00"},
                                  {"note", "hello"},
                                  {"ok", true},
                                  {"obj", {{"x", 1}}},
                                  {"arr", {1, 2}},
                                  {"none", nullptr}}});
  EXPECT_EQ(s["when"]["type"], "date");
  EXPECT_EQ(s["note"]["type"], "string");
  EXPECT_EQ(s["ok"]["type"], "boolean");
  EXPECT_EQ(s["obj"]["type"], "object");
  EXPECT_EQ(s["arr"]["type"], "array");
  EXPECT_EQ(s["none"]["type"], "null");
  EXPECT_EQ(s["note"]["last"], "hello");
  EXPECT_FALSE(s["note"].contains("count"));
  EXPECT_EQ(s["obj"]["last"], (json{{"x", 1}}));
}

TEST(TrialSummaryTest, ATypeChangeMakesAStringWithoutStatistics) {
  json s = SummaryOfReports({json{{"m", 1}}, json{{"m", "text"}}, json{{"m", 2}}});
  EXPECT_EQ(s["m"]["type"], "string");
  EXPECT_FALSE(s["m"].contains("count"));
  EXPECT_EQ(s["m"]["last"], 2);
}

TEST(TrialSummaryTest, NonFiniteValuesAreNumbersWrittenAsStrings) {
  json s = SummaryOfReports({json{{"l", 1}}, json{{"l", "Infinity"}}});
  EXPECT_EQ(s["l"]["type"], "number");
  EXPECT_EQ(s["l"]["max"], "Infinity");
  EXPECT_EQ(s["l"]["sum"], "Infinity");
  EXPECT_DOUBLE_EQ(s["l"]["min"].get<double>(), 1.0);
  EXPECT_EQ(s["l"]["last"], "Infinity");
  // A NaN, once reported, is the min and max from then on (Go's math.Min/Max).
  AccumulateSummary(s, json{{"l", "NaN"}});
  AccumulateSummary(s, json{{"l", 0.5}});
  EXPECT_EQ(s["l"]["min"], "NaN");
  EXPECT_EQ(s["l"]["max"], "NaN");
  EXPECT_EQ(s["l"]["count"], 4);
}

TEST(TrialSummaryTest, MalformedInputIsTreatedAsEmpty) {
  json s = "not an object";
  AccumulateSummary(s, json::array({1, 2}));
  EXPECT_EQ(s, json::object());
  AccumulateSummary(s, json{{"x", 1}});
  EXPECT_EQ(s["x"]["count"], 1);
}

}  // namespace
}  // namespace det::master::core
