#pragma once
// RetainFreedHeap: tells glibc's malloc to keep freed memory for reuse instead of handing it back
// to the kernel at once. A long-running server grows and shrinks its heap in bursts (a
// 20,000-trial creation, a large answer, a searcher's rung vectors); by default each shrink
// returns the pages (trim above 128 KiB, large blocks on their own mmap) and the next burst
// faults them in again, one fault per 4 KiB page, which is expensive in a virtual machine
// (searcher_bench: per-event cost at 10,000 trials 1.24-1.31x that at 1,000 trials with the
// defaults, 1.12x with this). The cost is resident memory that stays at the high-water mark,
// less `kTrimThresholdBytes`.

namespace det {

// Blocks below this size come from the heap (reused) rather than their own mmap.
inline constexpr int kMmapThresholdBytes = 64 << 20;
// Free memory at the top of a heap is returned to the kernel only beyond this size.
inline constexpr int kTrimThresholdBytes = 256 << 20;

// Applies the settings above; call at the start of main, before threads start. Returns false
// where malloc refused one of them (the defaults then stay; nothing else changes).
bool RetainFreedHeap();

}  // namespace det
