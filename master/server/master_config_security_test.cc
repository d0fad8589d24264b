// security.token_lifetime in master.yaml.
#include <gtest/gtest.h>

#include "master/server/master_config.h"

namespace det::master::server {
namespace {

TEST(MasterConfigSecurityTest, TokenLifetimeDefaultsToSevenDays) {
  MasterConfig config;
  EXPECT_EQ(config.token_lifetime_seconds, 7 * 24 * 3600);
}

TEST(MasterConfigSecurityTest, TokenLifetimeTakesSecondsOrADuration) {
  for (const auto& [yaml, seconds] :
       std::vector<std::pair<std::string, int64_t>>{{"security: {token_lifetime: 90}", 90},
                                                    {"security: {token_lifetime: 90s}", 90},
                                                    {"security: {token_lifetime: 30m}", 1800},
                                                    {"security: {token_lifetime: 12h}", 43200},
                                                    {"security: {token_lifetime: 7d}", 604800}}) {
    MasterConfig config;
    Status st = ApplyMasterYaml(yaml, &config);
    ASSERT_TRUE(st.ok()) << yaml << ": " << st.ToString();
    EXPECT_EQ(config.token_lifetime_seconds, seconds) << yaml;
  }
}

TEST(MasterConfigSecurityTest, BadTokenLifetimesNameTheFieldAndRule) {
  for (const char* yaml : {"security: {token_lifetime: 0}", "security: {token_lifetime: -5}",
                           "security: {token_lifetime: 3w}", "security: {token_lifetime: soon}",
                           "security: {token_lifetime: [1]}"}) {
    MasterConfig config;
    Status st = ApplyMasterYaml(yaml, &config);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << yaml;
    EXPECT_NE(st.message().find("security.token_lifetime: must be a positive number of seconds"),
              std::string::npos)
        << st.message();
  }
}

}  // namespace
}  // namespace det::master::server
