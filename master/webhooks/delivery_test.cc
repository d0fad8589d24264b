#include "master/webhooks/delivery.h"

#include <gtest/gtest.h>

namespace det::master::webhooks {
namespace {

using Kind = Verdict::Kind;

TEST(DeliveryTest, SuccessDelivers) {
  EXPECT_EQ(AfterAttempt(1, 200, 0).kind, Kind::kDelivered);
  EXPECT_EQ(AfterAttempt(1, 302, 0).kind, Kind::kDelivered);
}

TEST(DeliveryTest, ClientErrorsAreFinal) {
  EXPECT_EQ(AfterAttempt(1, 404, 0).kind, Kind::kGiveUp);
  EXPECT_EQ(AfterAttempt(1, 400, 0).kind, Kind::kGiveUp);
}

TEST(DeliveryTest, ServerErrorsAndTransportFailuresBackOff) {
  Verdict v = AfterAttempt(1, 503, 100);
  EXPECT_EQ(v.kind, Kind::kRetry);
  EXPECT_EQ(v.next_attempt_at, 100 + 1'000'000);
  v = AfterAttempt(3, std::nullopt, 100);
  EXPECT_EQ(v.kind, Kind::kRetry);
  EXPECT_EQ(v.next_attempt_at, 100 + 4'000'000);
  EXPECT_EQ(AfterAttempt(kMaxAttempts, std::nullopt, 0).kind, Kind::kGiveUp);
  EXPECT_EQ(AfterAttempt(kMaxAttempts, 500, 0).kind, Kind::kGiveUp);
}

}  // namespace
}  // namespace det::master::webhooks
