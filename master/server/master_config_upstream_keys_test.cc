// Keys of Determined's master.yaml that configure nothing here (scim, cache, launch_error): a
// config written for Determined, such as its own CI's, starts the master; a wrong shape is
// still refused naming the field.
#include <gtest/gtest.h>

#include "master/server/master_config.h"

namespace det::master::server {
namespace {

TEST(MasterConfigUpstreamKeysTest, DeterminedsCiKeysAreAccepted) {
  MasterConfig config;
  Status st = ApplyMasterYaml(
      "scim:\n  enabled: true\n  auth: {type: basic, username: determined, password: password}\n"
      "cache:\n  cache_dir: /tmp/determined-cache\n"
      "launch_error: false\n",
      &config);
  EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST(MasterConfigUpstreamKeysTest, WrongShapesNameTheField) {
  for (const auto& [yaml, expected] : std::vector<std::pair<std::string, std::string>>{
           {"scim: yes-please", "scim: must be a mapping"},
           {"cache: /tmp/x", "cache: must be a mapping"},
           {"cache: {cache_dir: 5}", "cache.cache_dir: must be a string"},
           {"launch_error: sometimes", "launch_error: must be true or false, got \"sometimes\""},
           {"scimm: {}", "scimm: unknown field"}}) {
    MasterConfig config;
    Status st = ApplyMasterYaml(yaml, &config);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << yaml;
    EXPECT_NE(st.message().find(expected), std::string::npos) << yaml << ": " << st.message();
  }
}

}  // namespace
}  // namespace det::master::server
