#include "master/api/experiment_filter.h"

#include <gtest/gtest.h>

namespace det::master::api {
namespace {

server::HttpRequest Req(const std::string& query) {
  server::HttpRequest r;
  r.query_all = server::ParseQueryAll(query);
  r.query = server::ParseQuery(query);
  return r;
}

TEST(ExperimentFilterTest, DefaultsToAllById) {
  auto f = ParseExperimentFilter(Req(""));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->sort_by, store::ExperimentSortKey::kId);
  EXPECT_FALSE(f->descending);
  EXPECT_FALSE(f->archived.has_value());
  EXPECT_TRUE(f->states.empty());
}

TEST(ExperimentFilterTest, ParsesDeterminedNames) {
  auto f = ParseExperimentFilter(
      Req("sortBy=SORT_BY_START_TIME&orderBy=ORDER_BY_DESC&states=STATE_RUNNING&"
          "states=STATE_ACTIVE&states=STATE_PAUSED&users=admin&users=determined&userIds=3&"
          "labels=a&labels=b&name=mni&description=d&archived=false"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->sort_by, store::ExperimentSortKey::kStartTime);
  EXPECT_TRUE(f->descending);
  EXPECT_EQ(f->states, (std::vector<std::string>{"ACTIVE", "PAUSED"}));  // no duplicates
  EXPECT_EQ(f->usernames, (std::vector<std::string>{"admin", "determined"}));
  EXPECT_EQ(f->user_ids, (std::vector<int64_t>{3}));
  EXPECT_EQ(f->labels, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(f->name, "mni");
  EXPECT_EQ(f->description, "d");
  EXPECT_EQ(f->archived, false);
}

TEST(ExperimentFilterTest, ExperimentIdFilter) {
  auto f = ParseExperimentFilter(
      Req("experimentIdFilter.gt=1&experimentIdFilter.lte=9&experimentIdFilter.incl=2&"
          "experimentIdFilter.incl=3&experimentIdFilter.notIn=4"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->id_gt, 1);
  EXPECT_EQ(f->id_gte, std::nullopt);
  EXPECT_EQ(f->id_lte, 9);
  EXPECT_EQ(f->id_in, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(f->id_not_in, (std::vector<int64_t>{4}));
  auto bad = ParseExperimentFilter(Req("experimentIdFilter.incl=x"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("experimentIdFilter.incl: \"x\""), std::string::npos);
}

TEST(ExperimentFilterTest, CommaSeparatedValues) {
  auto f = ParseExperimentFilter(Req("states=STATE_COMPLETED,STATE_ERROR&labels=x,y"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->states, (std::vector<std::string>{"COMPLETED", "ERROR"}));
  EXPECT_EQ(f->labels, (std::vector<std::string>{"x", "y"}));
}

// Determined's clients send the enum by name; grpc-gateway also takes its number.
TEST(ExperimentFilterTest, OrderByNameOrNumber) {
  auto by_number = ParseExperimentFilter(Req("sortBy=SORT_BY_SEARCHER_METRIC_VAL&orderBy=2"));
  ASSERT_TRUE(by_number.ok()) << by_number.status().ToString();
  EXPECT_TRUE(by_number->descending);
  EXPECT_EQ(by_number->sort_by, store::ExperimentSortKey::kSearcherMetricVal);
  auto asc = ParseExperimentFilter(Req("orderBy=ORDER_BY_ASC"));
  ASSERT_TRUE(asc.ok());
  EXPECT_FALSE(asc->descending);
}

TEST(ExperimentFilterTest, BadValuesNameTheField) {
  auto bad_sort = ParseExperimentFilter(Req("sortBy=SORT_BY_NOPE"));
  ASSERT_FALSE(bad_sort.ok());
  EXPECT_NE(bad_sort.status().message().find("sortBy: \"SORT_BY_NOPE\""), std::string::npos);
  auto bad_order = ParseExperimentFilter(Req("orderBy=UP"));
  ASSERT_FALSE(bad_order.ok());
  EXPECT_NE(bad_order.status().message().find("orderBy"), std::string::npos);
  auto bad_state = ParseExperimentFilter(Req("states=RUNNING"));
  ASSERT_FALSE(bad_state.ok());
  EXPECT_NE(bad_state.status().message().find("states: \"RUNNING\""), std::string::npos);
  auto bad_user = ParseExperimentFilter(Req("userIds=x1"));
  ASSERT_FALSE(bad_user.ok());
  EXPECT_NE(bad_user.status().message().find("userIds"), std::string::npos);
  auto bad_archived = ParseExperimentFilter(Req("archived=maybe"));
  ASSERT_FALSE(bad_archived.ok());
  EXPECT_EQ(bad_archived.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace det::master::api
