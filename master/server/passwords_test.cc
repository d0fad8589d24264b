#include "master/server/passwords.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace det::master::server
