#include "master/server/passwords.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

namespace det::master::server {
namespace {

// Ensures the bcrypt round trip accepts the right client hash only, and blank matches blank.
TEST(PasswordsTest, BcryptRoundTrip) {
  std::string client = ClientPasswordHash("s3cret");
  EXPECT_EQ(client.size(), 128u);
  auto hash = BcryptHash(client);
  ASSERT_TRUE(hash.ok());
  EXPECT_TRUE(VerifyPassword(client, *hash));
  EXPECT_FALSE(VerifyPassword(ClientPasswordHash("wrong"), *hash));
  EXPECT_FALSE(VerifyPassword("", *hash));
  EXPECT_TRUE(VerifyPassword("", std::nullopt));
  EXPECT_FALSE(VerifyPassword(client, std::nullopt));
}

TEST(PasswordsTest, TokensAndLoopback) {
  EXPECT_EQ(NewToken().size(), 64u);
  EXPECT_NE(NewToken(), NewToken());
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackAddress("::1"));
  EXPECT_FALSE(IsLoopbackAddress("0.0.0.0"));
  EXPECT_EQ(ClientPasswordHash(""), "");
}

// Tokens come from per-thread blocks of random bytes: across several blocks and threads none
// repeats, and each is 64 lowercase hex digits.
TEST(PasswordsTest, TokensAcrossBlocksAndThreadsAreDistinct) {
  std::vector<std::vector<std::string>> made(3);
  std::vector<std::thread> threads;
  for (auto& out : made) {
    threads.emplace_back([&out] {
      for (int i = 0; i < 1000; ++i) out.push_back(NewToken());
    });
  }
  for (auto& t : threads) t.join();
  std::set<std::string> seen;
  for (const auto& out : made) {
    for (const std::string& t : out) {
      ASSERT_EQ(t.size(), 64u);
      EXPECT_EQ(t.find_first_not_of("0123456789abcdef"), std::string::npos) << t;
      seen.insert(t);
    }
  }
  EXPECT_EQ(seen.size(), 3000u);
}

}  // namespace
}  // namespace det::master::server
