#include "master/server/login_throttle.h"

#include <gtest/gtest.h>

namespace det::master::server {
namespace {

constexpr int64_t kSecond = 1'000'000;

TEST(LoginThrottleTest, FiveFailuresAreFree) {
  LoginThrottle t;
  for (int i = 0; i < 4; ++i) t.RecordFailure("user:bob", 100 * kSecond);
  EXPECT_EQ(t.RetryAfter("user:bob", 100 * kSecond), 0);
  t.RecordFailure("user:bob", 100 * kSecond);
  EXPECT_EQ(t.RetryAfter("user:bob", 100 * kSecond), kSecond);
  EXPECT_EQ(t.RetryAfter("user:alice", 100 * kSecond), 0);
}

TEST(LoginThrottleTest, BackOffDoublesAndIsCapped) {
  LoginThrottleOptions o;
  o.max_delay_micros = 10 * kSecond;
  LoginThrottle t(o);
  for (int i = 0; i < 5; ++i) t.RecordFailure("k", 0);
  EXPECT_EQ(t.RetryAfter("k", 0), kSecond);
  t.RecordFailure("k", 0);
  EXPECT_EQ(t.RetryAfter("k", 0), 2 * kSecond);
  t.RecordFailure("k", 0);
  EXPECT_EQ(t.RetryAfter("k", kSecond), 3 * kSecond);  // 4 s from the failure, 1 s later
  for (int i = 0; i < 10; ++i) t.RecordFailure("k", 0);
  EXPECT_EQ(t.RetryAfter("k", 0), 10 * kSecond);
  EXPECT_EQ(t.RetryAfter("k", 11 * kSecond), 0);
}

TEST(LoginThrottleTest, SuccessClears) {
  LoginThrottle t;
  for (int i = 0; i < 7; ++i) t.RecordFailure("k", 0);
  EXPECT_GT(t.RetryAfter("k", 0), 0);
  t.RecordSuccess("k");
  EXPECT_EQ(t.RetryAfter("k", 0), 0);
}

TEST(LoginThrottleTest, TrackedKeysAreBounded) {
  LoginThrottleOptions o;
  o.max_tracked_keys = 2;
  o.free_failures = 1;
  LoginThrottle t(o);
  t.RecordFailure("a", 1);
  t.RecordFailure("b", 2);
  t.RecordFailure("c", 3);  // drops "a", the oldest
  EXPECT_EQ(t.RetryAfter("a", 3), 0);
  EXPECT_GT(t.RetryAfter("b", 3), 0);
  EXPECT_GT(t.RetryAfter("c", 3), 0);
}

TEST(LoginThrottleTest, FailuresAreForgottenAfterAQuietHour) {
  LoginThrottle t;
  for (int i = 0; i < 7; ++i) t.RecordFailure("k", kSecond);
  EXPECT_GT(t.RetryAfter("k", 2 * kSecond), 0);
  const int64_t later = kSecond + 3601 * kSecond;
  EXPECT_EQ(t.RetryAfter("k", later), 0);
  t.RecordFailure("k", later);  // counts from one again
  EXPECT_EQ(t.RetryAfter("k", later), 0);
}

}  // namespace
}  // namespace det::master::server
