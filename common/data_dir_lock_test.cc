#include "common/data_dir_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "common/test_dir.h"

namespace det {
namespace {

TEST(DataDirLockTest, ASecondHolderIsRefusedNamingTheFirstAndTheLock) {
  std::string dir = (det::testing::FreshTestDir("det_lock_") / "nested").string();
  {
    auto first = DataDirLock::Acquire(dir, "master.lock", "determined-master", "stop it first");
    ASSERT_TRUE(first.ok()) << first.status().message();
    // flock locks belong to an open file: a second open in this process is a second holder.
    auto second = DataDirLock::Acquire(dir, "master.lock", "determined-master", "stop it first");
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
    const std::string msg = second.status().message();
    EXPECT_NE(msg.find("data dir " + dir + " is in use by another determined-master (pid " +
                       std::to_string(getpid())),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("lock " + (*first)->path() + "); stop it first"), std::string::npos) << msg;
    // Another kind of holder has its own file in the same dir.
    EXPECT_TRUE(DataDirLock::Acquire(dir, "agent.lock", "agent").ok());
  }
  EXPECT_TRUE(DataDirLock::Acquire(dir, "master.lock", "determined-master").ok());  // released
}

}  // namespace
}  // namespace det
