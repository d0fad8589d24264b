#include "master/server/task_container.h"

#include <gtest/gtest.h>

namespace det::master::server {
namespace {

using nlohmann::json;

TEST(TaskContainerTest, AProcessTaskLinksRelativeMountsAndNamesTheOnesItCannotApply) {
  json config = {{"bind_mounts",
                  {{{"host_path", "/datasets/mnist"}, {"container_path", "data/mnist/"}},
                   {{"host_path", "/scratch"}, {"container_path", "/scratch"}},
                   {{"host_path", "/srv/models"}, {"container_path", "/models"}}}}};
  Result<TaskMounts> m = PlanTaskMounts(config, "cpu");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_FALSE(m->container.has_value());
  ASSERT_EQ(m->links.size(), 1u);
  EXPECT_EQ(m->links[0].first, "data/mnist");
  EXPECT_EQ(m->links[0].second, "/datasets/mnist");
  ASSERT_EQ(m->notes.size(), 1u);
  EXPECT_NE(m->notes[0].find("bind_mounts[2]: /srv/models is not mounted at /models"),
            std::string::npos)
      << m->notes[0];
  EXPECT_EQ(LinkCommands(m->links),
            "mkdir -p 'data' && ln -sfn '/datasets/mnist' 'data/mnist' && ");
  EXPECT_EQ(LinkCommands({}), "");
}

TEST(TaskContainerTest, AnImageMountsEveryOneOfThem) {
  json config = {
      {"environment", {{"image", "localhost/det-test:1"}}},
      {"resources", {{"shm_size", "64M"}}},
      {"bind_mounts",
       {{{"host_path", "/srv/models"}, {"container_path", "/models"}, {"read_only", true}},
        {{"host_path", "/datasets"}, {"container_path", "data"}}}}};
  Result<TaskMounts> m = PlanTaskMounts(config, "cpu");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_TRUE(m->container.has_value());
  const json& c = *m->container;
  EXPECT_EQ(c["image"], "localhost/det-test:1");
  EXPECT_EQ(c["shmSizeBytes"], 64 * 1024 * 1024);
  ASSERT_EQ(c["bindMounts"].size(), 2u);
  EXPECT_EQ(c["bindMounts"][0]["hostPath"], "/srv/models");
  EXPECT_EQ(c["bindMounts"][0]["containerPath"], "/models");
  EXPECT_EQ(c["bindMounts"][0]["readOnly"], true);
  // Relative: mounted at its host path and linked from the working directory.
  EXPECT_EQ(c["bindMounts"][1]["containerPath"], "/datasets");
  ASSERT_EQ(m->links.size(), 1u);
  EXPECT_EQ(m->links[0].first, "data");
  EXPECT_TRUE(m->notes.empty());
}

TEST(TaskContainerTest, TheBuiltInDefaultImageIsAProcess) {
  json config = {{"environment", {{"image", "determinedai/pytorch-ngc-dev:0736b6d"}}}};
  Result<TaskMounts> m = PlanTaskMounts(config, "cpu");
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(m->container.has_value());
}

TEST(TaskContainerTest, BadMountsAndEnvironmentsNameTheField) {
  Result<TaskMounts> m =
      PlanTaskMounts({{"bind_mounts", {{{"host_path", "rel"}, {"container_path", "/x"}}}}}, "cpu");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("bind_mounts[0].host_path: must be an absolute path"),
            std::string::npos)
      << m.status().message();
  m = PlanTaskMounts({{"bind_mounts", {{{"host_path", "/x"}, {"container_path", "."}}}}}, "cpu");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("container_path"), std::string::npos);
  m = PlanTaskMounts({{"environment", {{"imagee", "x"}}}}, "cpu");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("imagee"), std::string::npos) << m.status().message();
}

}  // namespace
}  // namespace det::master::server
