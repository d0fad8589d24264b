#include "master/api/list_sort.h"

#include <gtest/gtest.h>

#include "common/clock.h"

namespace det::master::api {
namespace {

using nlohmann::json;

constexpr SortField kFields[] = {{"SORT_BY_ID", 1}, {"SORT_BY_NAME", 3}};

TEST(ListSortTest, SortByAcceptsNamesNumbersAndUnspecified) {
  EXPECT_EQ(*ParseSortBy("SORT_BY_NAME", kFields), "SORT_BY_NAME");
  EXPECT_EQ(*ParseSortBy("3", kFields), "SORT_BY_NAME");
  EXPECT_EQ(*ParseSortBy("", kFields), "");
  EXPECT_EQ(*ParseSortBy("SORT_BY_UNSPECIFIED", kFields), "");
  auto bad = ParseSortBy("SORT_BY_SIZE", kFields, "sortByAttr");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("sortByAttr"), std::string::npos);
  EXPECT_NE(bad.status().message().find("SORT_BY_SIZE"), std::string::npos);
  EXPECT_NE(bad.status().message().find("SORT_BY_NAME"), std::string::npos);
  EXPECT_FALSE(ParseSortBy("2", kFields).ok());
}

TEST(ListSortTest, OrderBy) {
  EXPECT_FALSE(ParseOrderBy("")->has_value());
  EXPECT_FALSE(ParseOrderBy("ORDER_BY_UNSPECIFIED")->has_value());
  EXPECT_EQ(**ParseOrderBy("ORDER_BY_ASC"), false);
  EXPECT_EQ(**ParseOrderBy("2"), true);
  auto bad = ParseOrderBy("DOWN");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("DOWN"), std::string::npos);
}

TEST(ListSortTest, NullKeysGoLastInBothDirectionsAndTiesKeepTheirOrder) {
  json items = json::array({{{"id", 1}, {"end", nullptr}},
                            {{"id", 2}, {"end", "2024-01-02"}},
                            {{"id", 3}, {"end", "2024-01-01"}},
                            {{"id", 4}, {"end", "2024-01-02"}}});
  auto ids = [](const json& a) {
    std::vector<int> out;
    for (const auto& i : a) out.push_back(i["id"].get<int>());
    return out;
  };
  auto key = [](const json& i) { return i["end"]; };
  json asc = items;
  SortJsonArray(asc, key, false);
  EXPECT_EQ(ids(asc), (std::vector<int>{3, 2, 4, 1}));
  json desc = items;
  SortJsonArray(desc, key, true);
  EXPECT_EQ(ids(desc), (std::vector<int>{2, 4, 3, 1}));
}

TEST(ListSortTest, WithoutAFieldDescReversesTheDefaultOrder) {
  json items = json::array({1, 2, 3});
  ApplyListSort(items, "", true, [](const std::string&) { return nullptr; });
  EXPECT_EQ(items, json::array({3, 2, 1}));
  ApplyListSort(items, "", std::nullopt, [](const std::string&) { return nullptr; });
  EXPECT_EQ(items, json::array({3, 2, 1}));
  ApplyListSort(items, "X", std::nullopt,
                [](const std::string&) { return [](const json& v) { return v; }; });
  EXPECT_EQ(items, json::array({1, 2, 3}));
}

std::vector<int> Ids(const json& items) {
  std::vector<int> out;
  for (const auto& i : items) out.push_back(i["id"].get<int>());
  return out;
}

json Trial(int id, const char* start, json end, double best, int restarts, const char* size) {
  return json{{"id", id},
              {"startTime", start},
              {"endTime", std::move(end)},
              {"state", id % 2 ? "STATE_COMPLETED" : "STATE_ACTIVE"},
              {"restarts", restarts},
              {"totalBatchesProcessed", 10 * id},
              {"totalCheckpointSize", size},
              {"bestValidation", {{"metrics", {{"avgMetrics", {{"loss", best}}}}}}},
              {"latestValidation", nullptr}};
}

TEST(ListSortTest, TrialsByDeterminedsSortBy) {
  json trials =
      json::array({Trial(1, "2024-01-01T00:00:00.5Z", "2024-01-01T00:00:10Z", 0.3, 2, "300"),
                   Trial(2, "2024-01-01T00:00:00Z", nullptr, 0.1, 0, "5000"),
                   Trial(3, "2024-01-01T00:00:01Z", "2024-01-01T00:00:02Z", 0.2, 1, "40")});
  const int64_t now = *ParseRfc3339("2024-01-01T00:01:00Z");
  auto sorted = [&](const char* by, const char* order) {
    json t = trials;
    Status st = SortTrials(t, by, order, "loss", now);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return Ids(t);
  };
  // Fractions of a second order by time, not by text.
  EXPECT_EQ(sorted("SORT_BY_START_TIME", ""), (std::vector<int>{2, 1, 3}));
  EXPECT_EQ(sorted("SORT_BY_END_TIME", "ORDER_BY_ASC"), (std::vector<int>{3, 1, 2}));
  EXPECT_EQ(sorted("SORT_BY_BEST_VALIDATION_METRIC", ""), (std::vector<int>{2, 3, 1}));
  EXPECT_EQ(sorted("7", "ORDER_BY_DESC"), (std::vector<int>{1, 3, 2}));
  EXPECT_EQ(sorted("SORT_BY_RESTARTS", ""), (std::vector<int>{2, 3, 1}));
  EXPECT_EQ(sorted("SORT_BY_CHECKPOINT_SIZE", ""), (std::vector<int>{3, 1, 2}));
  EXPECT_EQ(sorted("SORT_BY_DURATION", "ORDER_BY_DESC"), (std::vector<int>{2, 1, 3}));
  EXPECT_EQ(sorted("SORT_BY_ID", "ORDER_BY_DESC"), (std::vector<int>{3, 2, 1}));
  // No latest validation anywhere: the order stays.
  EXPECT_EQ(sorted("SORT_BY_LATEST_VALIDATION_METRIC", ""), (std::vector<int>{1, 2, 3}));
  json t = trials;
  EXPECT_FALSE(SortTrials(t, "SORT_BY_NAME", "", "loss", now).ok());
  EXPECT_FALSE(SortTrials(t, "", "SIDEWAYS", "loss", now).ok());
}

TEST(ListSortTest, UsersByNameUseTheDisplayNameWhenSet) {
  json users = json::array({{{"id", 1}, {"username", "zed"}, {"displayName", "Amy"}},
                            {{"id", 2}, {"username", "bob"}, {"displayName", ""}},
                            {{"id", 3}, {"username", "Carl"}, {"displayName", ""}}});
  json u = users;
  ASSERT_TRUE(SortUsers(u, "SORT_BY_NAME", "").ok());
  EXPECT_EQ(Ids(u), (std::vector<int>{1, 2, 3}));
  u = users;
  ASSERT_TRUE(SortUsers(u, "SORT_BY_USER_NAME", "ORDER_BY_DESC").ok());
  EXPECT_EQ(Ids(u), (std::vector<int>{1, 3, 2}));
  EXPECT_FALSE(SortUsers(u, "SORT_BY_ID", "").ok());
}

TEST(ListSortTest, WorkspacesProjectsTemplatesAgents) {
  json ws = json::array(
      {{{"id", 2}, {"name", "b"}}, {{"id", 1}, {"name", "c"}}, {{"id", 3}, {"name", "A"}}});
  json w = ws;
  ASSERT_TRUE(SortWorkspaces(w, "", "").ok());
  EXPECT_EQ(Ids(w), (std::vector<int>{1, 2, 3}));
  ASSERT_TRUE(SortWorkspaces(w, "SORT_BY_NAME", "").ok());
  EXPECT_EQ(Ids(w), (std::vector<int>{3, 2, 1}));
  json p = json::array(
      {{{"id", 2}, {"name", "x"}, {"description", "b"}, {"lastExperimentStartedAt", nullptr}},
       {{"id", 1},
        {"name", "y"},
        {"description", "a"},
        {"lastExperimentStartedAt", "2024-01-01T00:00:00Z"}}});
  ASSERT_TRUE(SortProjects(p, "SORT_BY_DESCRIPTION", "ORDER_BY_DESC").ok());
  EXPECT_EQ(Ids(p), (std::vector<int>{2, 1}));
  ASSERT_TRUE(SortProjects(p, "SORT_BY_LAST_EXPERIMENT_START_TIME", "ORDER_BY_DESC").ok());
  EXPECT_EQ(Ids(p), (std::vector<int>{1, 2}));
  json t = json::array({{{"id", 1}, {"name", "a"}}, {{"id", 2}, {"name", "b"}}});
  ASSERT_TRUE(SortTemplates(t, "SORT_BY_NAME", "ORDER_BY_DESC").ok());
  EXPECT_EQ(Ids(t), (std::vector<int>{2, 1}));
  EXPECT_FALSE(SortTemplates(t, "SORT_BY_ID", "").ok());
  json a = json::array({{{"id", "b"}, {"registeredTime", "2024-01-01T00:00:00Z"}},
                        {{"id", "a"}, {"registeredTime", "2024-01-02T00:00:00Z"}}});
  ASSERT_TRUE(SortAgents(a, "SORT_BY_ID", "").ok());
  EXPECT_EQ(a[0]["id"], "a");
  ASSERT_TRUE(SortAgents(a, "SORT_BY_TIME", "").ok());
  EXPECT_EQ(a[0]["id"], "b");
}

}  // namespace
}  // namespace det::master::api
