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

TEST(LogFilter, BadValuesNameTheParameter) {
  auto bad_time = Parse({{"timestampBefore", "yesterday"}});
  ASSERT_FALSE(bad_time.ok());
  EXPECT_NE(bad_time.status().message().find("timestampBefore"), std::string::npos);
  EXPECT_FALSE(Parse({{"rankIds", "x"}}).ok());
  EXPECT_FALSE(Parse({{"levels", "INFO"}}).ok());
}

}  // namespace
}  // namespace det::master::api
