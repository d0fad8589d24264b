#include "common/heap_retention.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace det {
namespace {

// A block of 8 MiB (above glibc's default mmap threshold) comes from the heap once retention is
// on, and freeing it leaves it in the arena's free memory instead of unmapping it.
TEST(HeapRetentionTest, LargeFreedBlocksStayInTheHeap) {
  ASSERT_TRUE(RetainFreedHeap());
  constexpr size_t kBytes = 8 << 20;
  struct mallinfo2 before = mallinfo2();
  char* block = static_cast<char*>(std::malloc(kBytes));
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kBytes);
  struct mallinfo2 held = mallinfo2();
  EXPECT_EQ(held.hblkhd, before.hblkhd) << "the block was mmapped on its own";
  std::free(block);
  struct mallinfo2 after = mallinfo2();
  EXPECT_GE(after.fordblks, kBytes) << "the freed block was returned to the kernel";
}

}  // namespace
}  // namespace det
