#pragma once
// QueuePosition: an exact, totally ordered position of a job in a resource pool's queue.
//
// Determined stores `unix_microseconds(submission) x 10^1000` in an arbitrary-precision decimal
// and moves jobs by averaging two neighbours. We keep the same order and the same operations with
// a representation that never loses precision and needs no big-number library:
//
//   value = whole + fraction,  whole: int64 (one unit = one microsecond of submission time),
//   fraction: a finite binary fraction in [0, 1) held as 32-bit words, most significant first.
//
// Rules:
// 1. FromMicros(t) is the position of a job submitted at t (what Determined calls t x 10^1000:
//    the scale factor is dropped, one unit here is one unit there).
// 2. Average(a, b) = (a + b) / 2 exactly (dyadic rationals are closed under halving), so
//    Average(a, b) equals a or b only when a == b.
// 3. PlusUnits(n) adds n whole units (the "±1 unit" of the ahead-of/behind-of moves).
// 4. Comparison and equality are numeric; the representation is canonical (no trailing zero
//    words), so equal values are equal structurally too (resolves quirk 7.5).
// 5. ToString() is the exact decimal expansion ("1640995260000000.25"); Parse() accepts any
//    decimal whose fraction is an exact binary fraction, i.e. everything ToString() produces.
//    This is the form stored in the jobs table's q_position column.

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace det::master::scheduler {

class QueuePosition {
 public:
  QueuePosition() = default;

  static QueuePosition FromMicros(int64_t unix_micros);
  static Result<QueuePosition> Parse(std::string_view text);
  static QueuePosition Average(const QueuePosition& a, const QueuePosition& b);

  QueuePosition PlusUnits(int64_t units) const;
  std::string ToString() const;

  int64_t whole() const { return whole_; }
  // Number of fraction bits in use (a measure of how often this position was averaged).
  int FractionBits() const;

  friend bool operator==(const QueuePosition& a, const QueuePosition& b) = default;
  friend std::strong_ordering operator<=>(const QueuePosition& a, const QueuePosition& b);

 private:
  void Trim();

  int64_t whole_ = 0;
  std::vector<uint32_t> fraction_;  // most significant word first; no trailing zero words
};

}  // namespace det::master::scheduler
