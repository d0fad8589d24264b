#include "master/scheduler/queue_position.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace det::master::scheduler {
namespace {

// Returns 1 - f for a non-zero fraction f (two's complement over the fraction words).
std::vector<uint32_t> ComplementFraction(const std::vector<uint32_t>& f) {
  std::vector<uint32_t> out(f.size());
  uint64_t carry = 1;
  for (size_t i = f.size(); i-- > 0;) {
    uint64_t x = static_cast<uint64_t>(~f[i]) + carry;
    out[i] = static_cast<uint32_t>(x);
    carry = x >> 32;
  }
  return out;
}

std::string FractionDigits(std::vector<uint32_t> f) {
  std::string digits;
  while (!f.empty()) {
    uint64_t carry = 0;
    for (size_t i = f.size(); i-- > 0;) {
      uint64_t x = static_cast<uint64_t>(f[i]) * 10 + carry;
      f[i] = static_cast<uint32_t>(x);
      carry = x >> 32;
    }
    digits.push_back(static_cast<char>('0' + carry));
    while (!f.empty() && f.back() == 0) f.pop_back();
  }
  return digits;
}

}  // namespace

QueuePosition QueuePosition::FromMicros(int64_t unix_micros) {
  QueuePosition p;
  p.whole_ = unix_micros;
  return p;
}

void QueuePosition::Trim() {
  while (!fraction_.empty() && fraction_.back() == 0) fraction_.pop_back();
}

int QueuePosition::FractionBits() const {
  if (fraction_.empty()) return 0;
  uint32_t last = fraction_.back();
  int trailing = 0;
  while ((last & 1u) == 0) {
    last >>= 1;
    ++trailing;
  }
  return static_cast<int>(fraction_.size()) * 32 - trailing;
}

QueuePosition QueuePosition::Average(const QueuePosition& a, const QueuePosition& b) {
  size_t n = std::max(a.fraction_.size(), b.fraction_.size());
  std::vector<uint32_t> sum(n, 0);
  uint64_t carry = 0;
  for (size_t i = n; i-- > 0;) {
    uint64_t x = carry;
    if (i < a.fraction_.size()) x += a.fraction_[i];
    if (i < b.fraction_.size()) x += b.fraction_[i];
    sum[i] = static_cast<uint32_t>(x);
    carry = x >> 32;
  }
  int64_t whole = a.whole_ + b.whole_ + static_cast<int64_t>(carry);
  uint32_t odd = static_cast<uint32_t>(whole & 1);  // floor-mod 2, also for negatives
  QueuePosition out;
  out.whole_ = (whole - odd) / 2;
  if (!sum.empty() && (sum.back() & 1u)) sum.push_back(0);
  uint32_t in_bit = odd;
  for (size_t i = 0; i < sum.size(); ++i) {
    uint32_t next_in = sum[i] & 1u;
    sum[i] = (sum[i] >> 1) | (in_bit << 31);
    in_bit = next_in;
  }
  if (sum.empty() && odd) sum.push_back(0x80000000u);
  out.fraction_ = std::move(sum);
  out.Trim();
  return out;
}

QueuePosition QueuePosition::PlusUnits(int64_t units) const {
  QueuePosition out = *this;
  out.whole_ += units;
  return out;
}

std::strong_ordering operator<=>(const QueuePosition& a, const QueuePosition& b) {
  if (a.whole_ != b.whole_) return a.whole_ <=> b.whole_;
  size_t n = std::max(a.fraction_.size(), b.fraction_.size());
  for (size_t i = 0; i < n; ++i) {
    uint32_t x = i < a.fraction_.size() ? a.fraction_[i] : 0;
    uint32_t y = i < b.fraction_.size() ? b.fraction_[i] : 0;
    if (x != y) return x <=> y;
  }
  return std::strong_ordering::equal;
}

std::string QueuePosition::ToString() const {
  if (fraction_.empty()) return std::to_string(whole_);
  if (whole_ >= 0) return std::to_string(whole_) + "." + FractionDigits(fraction_);
  // whole_ < 0 and fraction > 0: value = -((-whole_ - 1) + (1 - fraction)).
  uint64_t magnitude = static_cast<uint64_t>(-(whole_ + 1));
  return "-" + std::to_string(magnitude) + "." + FractionDigits(ComplementFraction(fraction_));
}

Result<QueuePosition> QueuePosition::Parse(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("invalid queue position \"" + std::string(text) + "\": " + why);
  };
  std::string_view rest = text;
  bool negative = false;
  if (!rest.empty() && (rest[0] == '-' || rest[0] == '+')) {
    negative = rest[0] == '-';
    rest.remove_prefix(1);
  }
  size_t dot = rest.find('.');
  std::string_view int_part = rest.substr(0, dot);
  std::string_view frac_part = dot == std::string_view::npos ? "" : rest.substr(dot + 1);
  if (int_part.empty()) return bad("missing integer part");
  for (char c : int_part) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return bad("not a decimal number");
  }
  for (char c : frac_part) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return bad("not a decimal number");
  }
  if (dot != std::string_view::npos && frac_part.empty()) return bad("empty fraction");
  int64_t whole = 0;
  auto [ptr, ec] = std::from_chars(int_part.data(), int_part.data() + int_part.size(), whole);
  if (ec != std::errc() || ptr != int_part.data() + int_part.size()) return bad("out of range");

  // Decimal fraction -> binary fraction by repeated doubling; an n-digit decimal fraction that
  // is an exact binary fraction needs at most n bits.
  std::vector<int> digits;
  for (char c : frac_part) digits.push_back(c - '0');
  while (!digits.empty() && digits.back() == 0) digits.pop_back();
  std::vector<uint32_t> fraction;
  size_t max_bits = frac_part.size();
  for (size_t bit = 0; !digits.empty(); ++bit) {
    if (bit >= max_bits) return bad("fraction is not an exact binary fraction");
    int carry = 0;
    for (size_t i = digits.size(); i-- > 0;) {
      int x = digits[i] * 2 + carry;
      digits[i] = x % 10;
      carry = x / 10;
    }
    while (!digits.empty() && digits.back() == 0) digits.pop_back();
    if (bit % 32 == 0) fraction.push_back(0);
    if (carry) fraction.back() |= 1u << (31 - bit % 32);
  }
  QueuePosition p;
  p.fraction_ = std::move(fraction);
  p.Trim();
  if (!negative) {
    p.whole_ = whole;
  } else if (p.fraction_.empty()) {
    p.whole_ = -whole;
  } else {
    p.whole_ = -whole - 1;
    p.fraction_ = ComplementFraction(p.fraction_);
    p.Trim();
  }
  return p;
}

}  // namespace det::master::scheduler
