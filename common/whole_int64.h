#pragma once
// WholeInt64: the whole of a request's text as a decimal int64, for ids in paths, queries and
// JSON strings (proto3 JSON sends int64 as strings).

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace det {

// An optional '-', then digits only (leading zeros are fine, as Go's strconv.ParseInt takes
// them). No '+', no spaces, no trailing bytes, no overflow: strtoll on c_str() stopped at an
// embedded NUL, so "1\0junk" (from "1%00junk") was 1, and it saturated out-of-range values.
inline std::optional<int64_t> WholeInt64(std::string_view text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 10);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace det
