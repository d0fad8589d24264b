#include "master/searcher/nprand.h"

#include <sstream>

namespace det::master::searcher {

namespace {
constexpr double kTwo26 = 67108864.0;            // 2^26
constexpr double kTwo53 = 9007199254740992.0;    // 2^53
}  // namespace

NpRand::NpRand(uint32_t seed) : mt_(seed) {}

uint32_t NpRand::Bits32() { return static_cast<uint32_t>(mt_()); }

uint64_t NpRand::Bits64() {
  uint64_t hi = Bits32();
  uint64_t lo = Bits32();
  return (hi << 32) | lo;
}

uint64_t NpRand::BitsLimit(uint64_t limit) {
  if (limit == 0) return 0;
  uint64_t mask = limit;
  mask |= mask >> 1;
  mask |= mask >> 2;
  mask |= mask >> 4;
  mask |= mask >> 8;
  mask |= mask >> 16;
  mask |= mask >> 32;
  uint64_t value;
  if (limit <= 0xffffffffULL) {
    do {
      value = Bits32() & mask;
    } while (value > limit);
  } else {
    do {
      value = Bits64() & mask;
    } while (value > limit);
  }
  return value;
}

int64_t NpRand::Intn(int64_t n) {
  if (n <= 1) return 0;
  return static_cast<int64_t>(BitsLimit(static_cast<uint64_t>(n - 1)));
}

int64_t NpRand::Int64(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  // Unsigned arithmetic: hi - lo may exceed int64 range.
  uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) - 1;
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + BitsLimit(span));
}

double NpRand::UnitInterval() {
  uint32_t a = Bits32() >> 5;
  uint32_t b = Bits32() >> 6;
  return (a * kTwo26 + b) / kTwo53;
}

double NpRand::Uniform(double lo, double hi) { return lo + (hi - lo) * UnitInterval(); }

void NpRand::Read(uint8_t* buf, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint32_t word = Bits32();
    for (int b = 0; b < 4 && i < n; ++b, ++i) buf[i] = static_cast<uint8_t>(word >> (8 * b));
  }
}

nlohmann::json NpRand::Snapshot() const {
  std::ostringstream out;
  out << mt_;
  return nlohmann::json{{"mt19937", out.str()}};
}

NpRand NpRand::FromSnapshot(const nlohmann::json& snapshot) {
  NpRand rng(0);
  auto state = TryFromSnapshot(snapshot);
  if (state) rng = *state;
  return rng;
}

std::optional<NpRand> NpRand::TryFromSnapshot(const nlohmann::json& snapshot) {
  if (!snapshot.is_object()) return std::nullopt;
  auto it = snapshot.find("mt19937");
  if (it == snapshot.end() || !it->is_string()) return std::nullopt;
  NpRand rng(0);
  std::istringstream in(it->get<std::string>());
  in >> rng.mt_;
  if (in.fail()) return std::nullopt;
  return rng;
}

}  // namespace det::master::searcher
