#include "common/heap_retention.h"

#include <malloc.h>

namespace det {

bool RetainFreedHeap() {
  // Setting either disables glibc's dynamic thresholds, which would otherwise raise the mmap
  // threshold only after a large block was freed (too late for the first bursts).
  bool ok = mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes) == 1;
  ok = mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes) == 1 && ok;
  return ok;
}

}  // namespace det
