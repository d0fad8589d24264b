#include "master/server/log_buffer.h"

#include <gtest/gtest.h>
#include <spdlog/logger.h>

#include <thread>

namespace det::master::server {
namespace {

// Ensures ids grow from 1, the oldest entries fall off past the capacity, and After/Tail slice.
TEST(LogBufferTest, KeepsTheNewestEntriesWithIncreasingIds) {
  LogBuffer buf(3);
  for (int i = 1; i <= 5; ++i) buf.Append(i, "LOG_LEVEL_INFO", "line " + std::to_string(i));
  auto all = buf.After(0);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].id, 3);
  EXPECT_EQ(all[0].message, "line 3");
  EXPECT_EQ(all[2].id, 5);
  EXPECT_EQ(buf.After(4).size(), 1u);
  EXPECT_EQ(buf.After(0, 2).size(), 2u);
  auto tail = buf.Tail(2);
  ASSERT_EQ(tail.size(), 2u);
  EXPECT_EQ(tail[0].id, 4);
  EXPECT_EQ(buf.Tail(10).size(), 3u);
}

// Ensures a waiter wakes for a newer line and times out when none comes.
TEST(LogBufferTest, WaitAfterWakesOnAppend) {
  LogBuffer buf;
  EXPECT_FALSE(buf.WaitAfter(0, 10));
  std::thread writer([&] { buf.Append(1, "LOG_LEVEL_INFO", "hello"); });
  EXPECT_TRUE(buf.WaitAfter(0, 10000));
  writer.join();
  EXPECT_FALSE(buf.WaitAfter(1, 10));
}

// Ensures the spdlog sink records the payload and maps the level to Determined's name.
TEST(LogBufferTest, SinkRecordsPayloadAndLevel) {
  auto buf = std::make_shared<LogBuffer>();
  spdlog::logger logger("test", std::make_shared<LogBufferSink>(buf));
  logger.warn("disk {} full", "/tmp");
  auto all = buf->After(0);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].message, "disk /tmp full");
  EXPECT_EQ(all[0].level, "LOG_LEVEL_WARNING");
  EXPECT_GT(all[0].timestamp, 0);
}

}  // namespace
}  // namespace det::master::server
