#include "cli/experiment_patch.h"

#include <gtest/gtest.h>

namespace det::cli {
namespace {

using json = nlohmann::json;

json Experiment() {
  return json::parse(R"({"id": 4, "name": "mnist", "description": "d", "notes": "",
                         "labels": ["a", "b"], "state": "STATE_ACTIVE", "config": {}})");
}

TEST(ExperimentPatchTest, AddLabelAppendsAndCopiesFields) {
  std::optional<json> p = LabelPatch(Experiment(), "c", true);
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, json::parse(R"({"id": 4, "name": "mnist", "description": "d", "notes": "",
                                "labels": ["a", "b", "c"]})"));
  EXPECT_FALSE(LabelPatch(Experiment(), "a", true));  // already there: nothing to send
}

TEST(ExperimentPatchTest, RemoveLabel) {
  std::optional<json> p = LabelPatch(Experiment(), "a", false);
  ASSERT_TRUE(p);
  EXPECT_EQ((*p)["labels"], json::array({"b"}));
  EXPECT_FALSE(LabelPatch(Experiment(), "zzz", false));
  json no_labels = {{"id", 1}, {"name", "x"}};
  std::optional<json> q = LabelPatch(no_labels, "new", true);
  ASSERT_TRUE(q);
  EXPECT_EQ((*q)["labels"], json::array({"new"}));
  EXPECT_FALSE(LabelPatch(no_labels, "new", false));
}

TEST(ExperimentPatchTest, ResourcesAndGcPolicy) {
  EXPECT_EQ(ResourcesPatch(3, "maxSlots", 4), json::parse(R"({"id":3,"resources":{"maxSlots":4}})"));
  EXPECT_EQ(ResourcesPatch(3, "maxSlots", nullptr),
            json::parse(R"({"id":3,"resources":{"maxSlots":null}})"));
  GcPolicy p{1, 2, 3};
  EXPECT_EQ(GcPolicyPatch(9, p), json::parse(R"({"id": 9, "checkpointStorage":
      {"saveExperimentBest": 1, "saveTrialBest": 2, "saveTrialLatest": 3}})"));
  EXPECT_EQ(GcPolicyQuery(p), "save_experiment_best=1&save_trial_best=2&save_trial_latest=3");
  EXPECT_EQ(GcPolicyRepr(p),
            "{'save_experiment_best': 1, 'save_trial_best': 2, 'save_trial_latest': 3}");
}

TEST(ExperimentPatchTest, ValuesAsPythonPrintsThem) {
  EXPECT_EQ(*ParseNoneOrInt("None"), json(nullptr));
  EXPECT_EQ(*ParseNoneOrInt("null"), json(nullptr));
  EXPECT_EQ(*ParseNoneOrInt("8"), json(8));
  EXPECT_FALSE(ParseNoneOrInt("eight").ok());
  EXPECT_EQ(PythonFloat(2), "2.0");
  EXPECT_EQ(PythonFloat(0.5), "0.5");
}

TEST(ExperimentPatchTest, ContinueBody) {
  EXPECT_EQ(*ContinueBody(5, std::nullopt, {}),
            (json{{"id", 5}, {"overrideConfig", "{}\n"}}));
  json b = *ContinueBody(5, std::nullopt, {"max_restarts=2"});
  EXPECT_EQ(b["id"], 5);
  EXPECT_NE(b["overrideConfig"].get<std::string>().find("max_restarts"), std::string::npos);
  EXPECT_FALSE(ContinueBody(5, std::nullopt, {"novalue"}).ok());
}

}  // namespace
}  // namespace det::cli
