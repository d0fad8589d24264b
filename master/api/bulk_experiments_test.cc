#include "master/api/bulk_experiments.h"

#include <gtest/gtest.h>

namespace det::master::api {
namespace {

using nlohmann::json;

TEST(BulkExperimentsTest, IdsAreTakenInOrderWhenThereAreNoFilters) {
  Result<BulkRequest> r = ParseBulkRequest(json{{"projectId", 1}, {"experimentIds", {3, 1, 2}}},
                                           BulkAction::kKill);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->ids, (std::vector<int64_t>{3, 1, 2}));
  EXPECT_FALSE(r->filter.has_value());
}

TEST(BulkExperimentsTest, FiltersSelectWithTheActionsDefaultStates) {
  Result<BulkRequest> pause = ParseBulkRequest(
      json{{"experimentIds", json::array()}, {"filters", {{"name", "mnist"}}}}, BulkAction::kPause);
  ASSERT_TRUE(pause.ok()) << pause.status().ToString();
  ASSERT_TRUE(pause->filter.has_value());
  EXPECT_EQ(pause->filter->name, "mnist");
  EXPECT_EQ(pause->filter->states, (std::vector<std::string>{"ACTIVE"}));

  Result<BulkRequest> kill = ParseBulkRequest(json{{"filters", json::object()}}, BulkAction::kKill);
  ASSERT_TRUE(kill.ok());
  EXPECT_EQ(kill->filter->states.size(), 6u) << "every state not ended";

  Result<BulkRequest> archive =
      ParseBulkRequest(json{{"filters", json::object()}}, BulkAction::kArchive);
  ASSERT_TRUE(archive.ok());
  EXPECT_EQ(archive->filter->archived, std::optional<bool>(false)) << "what is not archived yet";
  EXPECT_EQ(archive->filter->states, (std::vector<std::string>{"COMPLETED", "CANCELED", "ERROR"}));

  Result<BulkRequest> named = ParseBulkRequest(
      json{{"filters",
            {{"states", {"STATE_PAUSED", "ACTIVE"}},
             {"excludedExperimentIds", {7}},
             {"userIds", {2}},
             {"projectId", 4}}}},
      BulkAction::kCancel);
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  EXPECT_EQ(named->filter->states, (std::vector<std::string>{"PAUSED", "ACTIVE"}));
  EXPECT_EQ(named->filter->id_not_in, (std::vector<int64_t>{7}));
  EXPECT_EQ(named->filter->user_ids, (std::vector<int64_t>{2}));
  EXPECT_EQ(named->filter_project, 4);
}

TEST(BulkExperimentsTest, BadInputNamesTheFieldAndTheValue) {
  struct Case {
    json body;
    BulkAction action;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {json{{"experimentIds", "1"}}, BulkAction::kKill, "experimentIds: must be a list"},
           {json{{"experimentIds", {1, -2}}}, BulkAction::kKill, "experimentIds: -2 is not an"},
           {json{{"experimentIds", {1.5}}}, BulkAction::kPause, "experimentIds: 1.5"},
           {json{{"filters", {{"states", {"STATE_NAPPING"}}}}}, BulkAction::kPause,
            "filters.states: 'STATE_NAPPING' is not an experiment state"},
           {json{{"filters", {{"archived", "yes"}}}}, BulkAction::kArchive,
            "filters.archived: must be true or false"},
           {json{{"filters", {{"userIds", {0}}}}}, BulkAction::kKill,
            "filters.userIds: 0 is not a user id"},
           {json{{"filters", 3}}, BulkAction::kKill, "filters: must be an object"},
           {json{{"experimentIds", {1}}}, BulkAction::kMove, "destinationProjectId: required"},
           {json::array(), BulkAction::kKill, "body: must be a JSON object"},
       }) {
    Result<BulkRequest> r = ParseBulkRequest(c.body, c.action);
    ASSERT_FALSE(r.ok()) << c.body.dump();
    EXPECT_NE(r.status().message().find(c.says), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace det::master::api
