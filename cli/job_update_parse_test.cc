#include "cli/job_update_parse.h"

#include <gtest/gtest.h>

namespace det::cli {
namespace {

using json = nlohmann::json;

TEST(JobUpdateParseTest, BatchItems) {
  EXPECT_EQ(*ParseBatchJobUpdate("73853c5c.priority=1"),
            (json{{"jobId", "73853c5c"}, {"priority", 1}}));
  EXPECT_EQ(*ParseBatchJobUpdate("j1.weight=2"), (json{{"jobId", "j1"}, {"weight", 2.0}}));
  EXPECT_EQ(*ParseBatchJobUpdate("j1.resource-pool=compute"),
            (json{{"jobId", "j1"}, {"resourcePool", "compute"}}));
  EXPECT_EQ(*ParseBatchJobUpdate("j1.resource_pool=gpu"),
            (json{{"jobId", "j1"}, {"resourcePool", "gpu"}}));
  EXPECT_EQ(*ParseBatchJobUpdate("j3.ahead-of=j1"), (json{{"jobId", "j3"}, {"aheadOf", "j1"}}));
  EXPECT_EQ(*ParseBatchJobUpdate("j3.behind_of=j1"), (json{{"jobId", "j3"}, {"behindOf", "j1"}}));
}

TEST(JobUpdateParseTest, BatchErrorsNameTheJob) {
  Result<json> r = ParseBatchJobUpdate("j1priority=1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "Job j1priority=1 and its operation have an invalid format. Please ensure the update "
            "is formatted as <jobID>.<operation>=<value>.");
  r = ParseBatchJobUpdate("j1.priority");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "The operation for job j1 has invalid format. Please ensure the operation is "
            "formatted as <operation>=<value>.");
  r = ParseBatchJobUpdate("j2.color=red");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "Invalid operation color specified for job j2. Supported commands include: "
            "('priority', 'weight', 'resource_pool', 'ahead_of', 'behind_of').");
  r = ParseBatchJobUpdate("j2.priority=high");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("job j2"), std::string::npos);
  EXPECT_FALSE(ParseBatchJobUpdate("j2.weight=x").ok());
  EXPECT_FALSE(ParseBatchJobUpdate("j2.priority=1=2").ok());
}

TEST(JobUpdateParseTest, FlagsNeedExactlyOne) {
  JobUpdateFlags flags;
  EXPECT_FALSE(BuildJobUpdate("j", flags).ok());
  flags.priority = 10;
  EXPECT_EQ(*BuildJobUpdate("j", flags), (json{{"jobId", "j"}, {"priority", 10}}));
  flags.ahead_of = "k";
  EXPECT_FALSE(BuildJobUpdate("j", flags).ok());
  JobUpdateFlags w;
  w.weight = 0.5;
  EXPECT_EQ(*BuildJobUpdate("j", w), (json{{"jobId", "j"}, {"weight", 0.5}}));
  JobUpdateFlags b;
  b.behind_of = "k";
  EXPECT_EQ(*BuildJobUpdate("j", b), (json{{"jobId", "j"}, {"behindOf", "k"}}));
}

}  // namespace
}  // namespace det::cli
