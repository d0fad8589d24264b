#include "master/api/log_filter.h"

#include <gtest/gtest.h>

#include <map>

#include "common/clock.h"

namespace det::master::api {
namespace {

Result<LogFilter> Parse(const std::multimap<std::string, std::string>& q) {
  return ParseLogFilter([&q](const std::string& name) {
    std::vector<std::string> out;
    auto [a, b] = q.equal_range(name);
    for (auto it = a; it != b; ++it) out.push_back(it->second);
    return out;
  });
}

store::TaskLogRow Row(std::string agent, std::optional<int64_t> rank, std::string level, int64_t ts,
                      std::string log = "line") {
  store::TaskLogRow r;
  r.agent_id = std::move(agent);
  r.container_id = "c1";
  r.rank_id = rank;
  r.level = std::move(level);
  r.stdtype = "stdout";
  r.source = "task";
  r.timestamp = ts;
  r.log = std::move(log);
  return r;
}

TEST(LogFilter, EmptyPassesEverything) {
  auto f = Parse({});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->Empty());
  EXPECT_TRUE(f->Matches(Row("a", std::nullopt, "", 1)));
}

TEST(LogFilter, EachFilterNarrows) {
  auto f = Parse({{"agentIds", "a"},
                  {"agentIds", "b"},
                  {"rankIds", "0"},
                  {"levels", "LOG_LEVEL_WARNING"},
                  {"levels", "LOG_LEVEL_INFO"}});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_TRUE(f->Matches(Row("b", 0, "", 1)));  // no level = INFO
  EXPECT_FALSE(f->Matches(Row("c", 0, "", 1)));
  EXPECT_FALSE(f->Matches(Row("a", 1, "LOG_LEVEL_INFO", 1)));
  EXPECT_FALSE(f->Matches(Row("a", std::nullopt, "LOG_LEVEL_INFO", 1)));
  EXPECT_FALSE(f->Matches(Row("a", 0, "LOG_LEVEL_DEBUG", 1)));
}

TEST(LogFilter, TimesAndSearch) {
  int64_t t = *ParseRfc3339("2021-10-26T23:17:12Z");
  auto f = Parse({{"timestampAfter", "2021-10-26T23:17:12Z"}, {"searchText", "loss"}});
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(f->Matches(Row("a", 0, "", t, "loss=1")));  // exclusive
  EXPECT_TRUE(f->Matches(Row("a", 0, "", t + 1, "loss=1")));
  EXPECT_FALSE(f->Matches(Row("a", 0, "", t + 1, "acc=1")));
}

TEST(LogFilter, RankMinusOneMeansNoRankAndAllocationsFilter) {
  auto f = Parse({{"rankIds", "-1"}});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->Matches(Row("a", std::nullopt, "", 1)));
  EXPECT_FALSE(f->Matches(Row("a", 0, "", 1)));
  auto none = Parse({{"rankIds", "-2"}});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->Matches(Row("a", std::nullopt, "", 1)));
  auto alloc = Parse({{"allocationIds", "t.1"}});
  ASSERT_TRUE(alloc.ok());
  EXPECT_FALSE(alloc->Empty());
  store::TaskLogRow r = Row("a", 0, "", 1);
  EXPECT_FALSE(alloc->Matches(r));
  r.allocation_id = "t.1";
  EXPECT_TRUE(alloc->Matches(r));
}

TEST(LogFields, DistinctValuesInFirstSeenOrder) {
  LogFields fields;
  store::TaskLogRow a = Row("agent-b", 1, "", 1);
  a.allocation_id = "t.1";
  store::TaskLogRow b = Row("agent-a", std::nullopt, "", 2);
  b.allocation_id = "t.1";
  b.stdtype = "stderr";
  EXPECT_TRUE(fields.Add(a));
  EXPECT_FALSE(fields.Add(a));  // nothing new
  EXPECT_TRUE(fields.Add(b));
  nlohmann::json task = fields.ToJson(true);
  EXPECT_EQ(task["agentIds"], nlohmann::json({"agent-b", "agent-a"}));
  EXPECT_EQ(task["rankIds"], nlohmann::json({1}));
  EXPECT_EQ(task["stdtypes"], nlohmann::json({"stdout", "stderr"}));
  EXPECT_EQ(task["allocationIds"], nlohmann::json({"t.1"}));
  EXPECT_EQ(task["containerIds"], nlohmann::json({"c1"}));
  EXPECT_EQ(task["sources"], nlohmann::json({"task"}));
  EXPECT_FALSE(fields.ToJson(false).contains("allocationIds"));
}

TEST(LogFields, EachListIsBounded) {
  LogFields fields;
  for (size_t i = 0; i < LogFields::kMaxValues + 50; ++i) {
    store::TaskLogRow r = Row("a", static_cast<int64_t>(i), "", 1);
    r.container_id = "c" + std::to_string(i);
    fields.Add(r);
  }
  nlohmann::json j = fields.ToJson(true);
  EXPECT_EQ(j["containerIds"].size(), LogFields::kMaxValues);
  EXPECT_EQ(j["rankIds"].size(), LogFields::kMaxValues);
  EXPECT_EQ(j["containerIds"][0], "c0");
  EXPECT_EQ(j["agentIds"], nlohmann::json({"a"}));
}

TEST(LogFilter, BadValuesNameTheParameter) {
  auto bad_time = Parse({{"timestampBefore", "yesterday"}});
  ASSERT_FALSE(bad_time.ok());
  EXPECT_NE(bad_time.status().message().find("timestampBefore"), std::string::npos);
  EXPECT_FALSE(Parse({{"rankIds", "x"}}).ok());
  EXPECT_FALSE(Parse({{"levels", "INFO"}}).ok());
}

}  // namespace
}  // namespace det::master::api
