#include "common/heap_retention.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace det {
namespace {

// A block of 48 MiB comes from the heap once retention is on, and freeing it leaves it in the
// arena's free memory instead of unmapping it. With glibc's defaults it is always mmapped on its
// own: it is above the largest mmap threshold the dynamic adjustment reaches (32 MiB), whatever
// other tests in this process freed before.
TEST(HeapRetentionTest, LargeFreedBlocksStayInTheHeap) {
  ASSERT_TRUE(RetainFreedHeap());
  constexpr size_t kBytes = size_t{48} << 20;
  struct mallinfo2 before = mallinfo2();
  // volatile: the compiler may not elide the malloc/free pair.
  char* volatile block = static_cast<char*>(std::malloc(kBytes));
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
