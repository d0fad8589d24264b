#include "master/config/task_container_defaults.h"

#include <gtest/gtest.h>

namespace det::master::config {
namespace {

using nlohmann::json;

TEST(TaskContainerDefaults, ThePoolsOverTheMasters) {
  json master = {{"startup_hook", "echo master"},
                 {"environment_variables", {"A=1", "B=1"}},
                 {"bind_mounts", {{{"host_path", "/m"}, {"container_path", "/data"}},
                                  {{"host_path", "/m2"}, {"container_path", "/keep"}}}},
                 {"add_capabilities", {"SYS_PTRACE"}},
                 {"shm_size", 100}};
  json pool = {{"startup_hook", "echo pool"},
               {"environment_variables", {"B=2", "C=3"}},
               {"bind_mounts", {{{"host_path", "/p"}, {"container_path", "/data"}}}},
               {"add_capabilities", {"NET_ADMIN"}},
               {"shm_size", nullptr}};
  json merged = MergeTaskContainerDefaults(master, pool);
  EXPECT_EQ(merged["startup_hook"], "echo pool");
  EXPECT_EQ(merged["environment_variables"], json({"A=1", "B=2", "C=3"}));
  ASSERT_EQ(merged["bind_mounts"].size(), 2u);
  EXPECT_EQ(merged["bind_mounts"][0]["host_path"], "/p");
  EXPECT_EQ(merged["bind_mounts"][1]["container_path"], "/keep");
  EXPECT_EQ(merged["add_capabilities"], json({"NET_ADMIN", "SYS_PTRACE"}));
  EXPECT_EQ(merged["shm_size"], 100);  // null in the pool keeps the master's
}

TEST(TaskContainerDefaults, PerDeviceVariablesAndMissingSides) {
  json merged = MergeTaskContainerDefaults({{"environment_variables", {"A=1"}}},
                                           {{"environment_variables", {{"cuda", {"A=2"}}}}});
  EXPECT_EQ(merged["environment_variables"]["cpu"], json({"A=1"}));
  EXPECT_EQ(merged["environment_variables"]["cuda"], json({"A=2"}));
  EXPECT_EQ(MergeTaskContainerDefaults(nullptr, {{"startup_hook", "x"}})["startup_hook"], "x");
  EXPECT_EQ(MergeTaskContainerDefaults({{"startup_hook", "x"}}, nullptr)["startup_hook"], "x");
  EXPECT_TRUE(MergeTaskContainerDefaults(nullptr, nullptr).is_null());
  EXPECT_EQ(MergeTaskContainerDefaults({{"startup_hook", "m"}}, {{"startup_hook", ""}})
                ["startup_hook"],
            "m");
}

}  // namespace
}  // namespace det::master::config
