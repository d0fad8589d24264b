#include "agent/data_dir_lock.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>

namespace det::agent {
namespace {

TEST(DataDirLockTest, OneHolderAtATime) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "lock-XXXXXX").string();
  std::string dir = std::string(mkdtemp(tmpl.data())) + "/nested";
  {
    auto first = DataDirLock::Acquire(dir);
    ASSERT_TRUE(first.ok()) << first.status().message();
    auto second = DataDirLock::Acquire(dir);
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(second.status().message().find("in use by another agent (pid " +
                                             std::to_string(getpid()) + ")"),
              std::string::npos)
        << second.status().message();
  }
  EXPECT_TRUE(DataDirLock::Acquire(dir).ok());  // released with its holder
  std::error_code ec;
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path(), ec);
}

}  // namespace
}  // namespace det::agent
