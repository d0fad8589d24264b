#include "agent/detect/slots.h"

#include <gtest/gtest.h>

namespace det::agent {
namespace {

TEST(NvidiaSmiTest, ParsesCsv) {
  auto slots = ParseNvidiaSmiCsv(
      "0, NVIDIA H100 80GB HBM3, GPU-8c1a7b2e-0000-1111-2222-333344445555\n"
      "1, NVIDIA H100 80GB HBM3, GPU-9d2b8c3f-0000-1111-2222-333344445555\n\n");
  ASSERT_TRUE(slots.ok()) << slots.status().message();
  ASSERT_EQ(slots->size(), 2u);
  EXPECT_EQ((*slots)[0].id, 0);
  EXPECT_EQ((*slots)[0].type, "cuda");
  EXPECT_EQ((*slots)[0].brand, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ((*slots)[0].uuid, "GPU-8c1a7b2e-0000-1111-2222-333344445555");
  EXPECT_EQ((*slots)[1].id, 1);
  auto j = SlotToJson((*slots)[1]);
  EXPECT_EQ(j["type"], "cuda");
  EXPECT_EQ(j["id"], 1);
}

TEST(NvidiaSmiTest, NameWithCommaAndEmptyOutput) {
  auto slots = ParseNvidiaSmiCsv("3, Weird, Name, GPU-x\r\n");
  ASSERT_TRUE(slots.ok());
  EXPECT_EQ((*slots)[0].id, 3);
  EXPECT_EQ((*slots)[0].brand, "Weird, Name");
  EXPECT_EQ((*slots)[0].uuid, "GPU-x");
  auto none = ParseNvidiaSmiCsv("");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(NvidiaSmiTest, RejectsMalformed) {
  EXPECT_FALSE(ParseNvidiaSmiCsv("No devices were found\n").ok());
  EXPECT_FALSE(ParseNvidiaSmiCsv("x, name, GPU-1\n").ok());
  EXPECT_FALSE(ParseNvidiaSmiCsv("0, name\n").ok());
}

TEST(CpuSlotsTest, DeterministicPerAgent) {
  auto a = CpuSlots("agent-a", 3, "cpu");
  auto again = CpuSlots("agent-a", 3, "cpu");
  auto b = CpuSlots("agent-b", 3, "cpu");
  ASSERT_EQ(a.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(a[i].id, i);
    EXPECT_EQ(a[i].type, "cpu");
    EXPECT_EQ(a[i].uuid, again[i].uuid);
    EXPECT_NE(a[i].uuid, b[i].uuid);
    EXPECT_EQ(a[i].uuid.size(), 36u);
  }
  EXPECT_NE(a[0].uuid, a[1].uuid);
  EXPECT_TRUE(CpuSlots("x", 0, "cpu").empty());
}

TEST(DetectSlotsTest, ForcedCpu) {
  auto slots = DetectSlots(SlotType::kCpu, "agent", 2);
  ASSERT_TRUE(slots.ok());
  ASSERT_EQ(slots->size(), 2u);
  EXPECT_EQ((*slots)[1].type, "cpu");
}

}  // namespace
}  // namespace det::agent
