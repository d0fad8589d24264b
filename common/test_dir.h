#pragma once
// Test helper: an empty directory of the running gtest's own (prefix, pid and test name), so
// tests that run in parallel never share a database or checkpoint folder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace det::testing {

inline std::filesystem::path FreshTestDir(const std::string& prefix) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              (prefix + std::to_string(::getpid()) + "_" +
                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace det::testing
