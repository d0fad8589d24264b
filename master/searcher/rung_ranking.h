#pragma once
// RungRanking: the entries of one ASHA rung in (metric, arrival) order, held as two heaps split
// at position k = split(n): `low` keeps the k best entries (a max-heap, its top is position k-1)
// and `high` the rest (a min-heap, its top is position k). ASHA's rules only ask where a
// newcomer lands relative to positions k-1 and k, and k moves by at most one per insert, so an
// event costs O(log n) where a sorted vector insert shifted O(n) entries. Pure, not thread-safe.
//
// Rules:
//  1. Order: smaller metric first; equal metrics by arrival, the newcomer after the entries
//     already there (Ties::kNewcomerLast, promotion ASHA's upper_bound) or before them
//     (Ties::kNewcomerFirst, stop-based ASHA's lower_bound).
//  2. split(n) = floor(n / divisor) (Split::kFloor), or min(n, max(floor(n / divisor), 1))
//     (Split::kAtLeastOne); the heaps are rebalanced to it after every change.
//  3. Erase is O(n) (rebuilds both heaps): only invalid-hyperparameter exits remove entries.
//  4. Sorted() lists the entries in order (O(n log n), for snapshots and closing out a rung);
//     Assign(sorted) restores them, renumbering arrivals so the order is kept.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace det::master::searcher {

class RungRanking {
 public:
  enum class Ties { kNewcomerLast, kNewcomerFirst };
  enum class Split { kFloor, kAtLeastOne };

  // 16 bytes: four to a cache line along a heap path.
  struct Entry {
    double metric = 0;
    int32_t arrival = 0;  // order among equal metrics (see rule 1); a rung holds < 2^31 entries
    uint32_t trial = 0;   // the owner's handle for the trial
  };

  RungRanking(double divisor, Ties ties, Split split);

  size_t size() const { return low_.size() + high_.size(); }
  bool empty() const { return size() == 0; }
  // Number of entries in the low part: split(size()).
  size_t split() const { return low_.size(); }
  // The entry at position split() - 1. REQUIRES: split() > 0.
  const Entry& LastLow() const { return low_.front(); }
  // The entry at position split(). REQUIRES: size() > split().
  const Entry& FirstHigh() const { return high_.front(); }

  // Whether a newcomer with `metric` would land at a position < split().
  bool LandsInLow(double metric) const;
  // Whether a newcomer with `metric` would land at a position <= split().
  bool LandsAtOrBeforeSplit(double metric) const;

  void Insert(double metric, uint32_t trial);
  void Erase(uint32_t trial);

  std::vector<Entry> Sorted() const;
  // `entries` in rank order (metric and trial are read; arrivals are renumbered).
  void Assign(const std::vector<Entry>& entries);

 private:
  // Whether a newcomer with `metric` sorts before the existing entry `e`.
  bool NewcomerBefore(double metric, const Entry& e) const;
  size_t SplitFor(size_t n) const;
  void Rebalance();

  double divisor_;
  Ties ties_;
  Split split_;
  int32_t next_arrival_ = 0;
  std::vector<Entry> low_;   // max-heap by (metric, arrival)
  std::vector<Entry> high_;  // min-heap by (metric, arrival)
};

}  // namespace det::master::searcher
