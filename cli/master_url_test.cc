#include "cli/master_url.h"

#include <gtest/gtest.h>

namespace det::cli {
namespace {

// -m wins over DET_MASTER, which wins over DET_MASTER_ADDR, which wins over the default.
TEST(MasterUrlTest, Precedence) {
  EXPECT_EQ(ResolveMasterUrl("http://a:1", "http://b:2", "http://c:3"), "http://a:1");
  EXPECT_EQ(ResolveMasterUrl(std::nullopt, "http://b:2", "http://c:3"), "http://b:2");
  EXPECT_EQ(ResolveMasterUrl(std::nullopt, std::nullopt, "http://c:3"), "http://c:3");
  EXPECT_EQ(ResolveMasterUrl(std::nullopt, std::nullopt, std::nullopt), "http://127.0.0.1:8080");
  EXPECT_EQ(ResolveMasterUrl("", "", "http://c:3"), "http://c:3");
}

// A missing scheme becomes http://, and trailing slashes go.
TEST(MasterUrlTest, Normalizes) {
  EXPECT_EQ(ResolveMasterUrl("localhost:8080", std::nullopt, std::nullopt),
            "http://localhost:8080");
  EXPECT_EQ(ResolveMasterUrl("https://det.example.com/", std::nullopt, std::nullopt),
            "https://det.example.com");
  EXPECT_EQ(NormalizeMasterUrl("10.0.0.1:9000//"), "http://10.0.0.1:9000");
}

}  // namespace
}  // namespace det::cli
