#pragma once
// NpRand: MT19937 with numpy's legacy RandomState helpers, as Determined's nprand does, so a
// search seeded with the same experiment_seed draws the same values. State snapshots to JSON.

#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

namespace det::master::searcher {

class NpRand {
 public:
  explicit NpRand(uint32_t seed);

  uint32_t Bits32();
  uint64_t Bits64();                    // (Bits32 << 32) | Bits32
  uint64_t BitsLimit(uint64_t limit);   // uniform in [0, limit], masked rejection
  int64_t Intn(int64_t n);              // [0, n)
  int64_t Int64(int64_t lo, int64_t hi);  // [lo, hi)
  double UnitInterval();                // [0, 1)
  double Uniform(double lo, double hi); // REQUIRES: hi > lo
  void Read(uint8_t* buf, size_t n);    // little-endian bytes of successive Bits32

  nlohmann::json Snapshot() const;
  // A malformed snapshot yields NpRand(0); use TryFromSnapshot to detect it.
  static NpRand FromSnapshot(const nlohmann::json& snapshot);
  static std::optional<NpRand> TryFromSnapshot(const nlohmann::json& snapshot);

 private:
  std::mt19937 mt_;
};

}  // namespace det::master::searcher
