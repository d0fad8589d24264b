#include "master/searcher/nprand.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace det::master::searcher {
namespace {

// Determined's nprand_test.go vectors, which equal numpy RandomState(42).randint(10).
TEST(NpRandTest, IntnMatchesNumpySeed42) {
  NpRand rng(42);
  std::vector<int64_t> got;
  for (int i = 0; i < 10; ++i) got.push_back(rng.Intn(10));
  EXPECT_EQ(got, (std::vector<int64_t>{6, 3, 7, 4, 6, 9, 2, 6, 7, 4}));
}

// Int64 has an exclusive upper bound and supports negative ranges.
TEST(NpRandTest, Int64MatchesSeed84) {
  NpRand rng(84);
  std::vector<int64_t> got;
  for (int i = 0; i < 7; ++i) got.push_back(rng.Int64(-10, 10));
  EXPECT_EQ(got, (std::vector<int64_t>{0, 7, 4, 3, -10, 4, -9}));
}

// Large 32-bit limits take the masked-rejection path.
TEST(NpRandTest, IntnLargeMatchesSeed999) {
  NpRand rng(999);
  std::vector<int64_t> got;
  for (int i = 0; i < 3; ++i) got.push_back(rng.Intn(int64_t{1} << 31));
  EXPECT_EQ(got, (std::vector<int64_t>{1303213504, 648491356, 118207333}));
}

// Limits beyond 32 bits draw 64-bit words (numpy RandomState(5).randint(2**40)).
TEST(NpRandTest, Intn64BitMatchesNumpy) {
  NpRand rng(5);
  std::vector<int64_t> got;
  for (int i = 0; i < 3; ++i) got.push_back(rng.Intn(int64_t{1} << 40));
  EXPECT_EQ(got, (std::vector<int64_t>{425438759118, 1030067709629, 989404716150}));
}

// UnitInterval and Uniform equal numpy's random_sample / uniform bit for bit.
TEST(NpRandTest, UnitIntervalAndUniformMatchNumpy) {
  NpRand a(7);
  EXPECT_DOUBLE_EQ(a.UnitInterval(), 0.07630828937395717);
  EXPECT_DOUBLE_EQ(a.UnitInterval(), 0.7799187922401146);
  NpRand b(7);
  EXPECT_DOUBLE_EQ(b.Uniform(-3.0, 5.0), -2.3895336850083426);
}

// Intn(1) and BitsLimit(0) draw nothing.
TEST(NpRandTest, ZeroLimitDrawsNothing) {
  NpRand a(3), b(3);
  EXPECT_EQ(a.Intn(1), 0);
  EXPECT_EQ(a.BitsLimit(0), 0u);
  EXPECT_EQ(a.Bits32(), b.Bits32());
}

// Bits64 is two Bits32 words, high first; Read is little-endian words.
TEST(NpRandTest, Bits64AndReadUseBits32) {
  NpRand a(11), b(11), c(11);
  uint64_t hi = b.Bits32();
  uint64_t lo = b.Bits32();
  EXPECT_EQ(a.Bits64(), (hi << 32) | lo);
  uint8_t buf[6];
  c.Read(buf, sizeof(buf));
  NpRand d(11);
  uint32_t w0 = d.Bits32(), w1 = d.Bits32();
  EXPECT_EQ(buf[0], w0 & 0xff);
  EXPECT_EQ(buf[3], w0 >> 24);
  EXPECT_EQ(buf[4], w1 & 0xff);
  EXPECT_EQ(buf[5], (w1 >> 8) & 0xff);
}

// A snapshot taken mid-stream restores an identical stream and snapshots identically.
TEST(NpRandTest, SnapshotRestoresIdenticalStream) {
  NpRand a(2024);
  for (int i = 0; i < 1000; ++i) a.Bits32();
  nlohmann::json snap = a.Snapshot();
  NpRand b = NpRand::FromSnapshot(snap);
  EXPECT_EQ(b.Snapshot().dump(), snap.dump());
  for (int i = 0; i < 2000; ++i) ASSERT_EQ(a.Bits32(), b.Bits32());
}

TEST(NpRandTest, MalformedSnapshotIsRejected) {
  EXPECT_FALSE(NpRand::TryFromSnapshot(nlohmann::json{{"mt19937", "1 2 3"}}).has_value());
  EXPECT_FALSE(NpRand::TryFromSnapshot(nlohmann::json::array()).has_value());
}

}  // namespace
}  // namespace det::master::searcher
