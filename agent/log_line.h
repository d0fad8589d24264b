#pragma once
// Pure parsing of process output into log lines, as Determined's ship_logs.py does it.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace det::agent {

// One output line after the `[rank=N] ` and `LEVEL:` prefixes are stripped.
struct ParsedLogLine {
  std::optional<int> rank_id;
  std::optional<std::string> level;  // "LOG_LEVEL_INFO", ...
  std::string log;                   // keeps its trailing newline
};

// Parses one line (normally ending in '\n'): an optional leading `[rank=N]` (one optional space
// on either side) becomes rank_id; then an optional leading `DEBUG:|INFO:|WARNING:|ERROR:|
// CRITICAL:` (one optional space on either side) becomes level. Both are removed from log.
ParsedLogLine ParseLogLine(std::string_view line);

// Splits a byte stream into lines on '\n' or '\r' ("\r\n" counts once). Every line it returns
// ends in '\n' (a '\r' terminator is replaced by '\n'); a line longer than max_line_bytes is cut
// there. Not thread-safe.
class LineSplitter {
 public:
  static constexpr size_t kDefaultMaxLineBytes = 8191;

  explicit LineSplitter(size_t max_line_bytes = kDefaultMaxLineBytes)
      : max_line_bytes_(max_line_bytes) {}

  // Consumes `data`; returns the lines it completed.
  std::vector<std::string> Feed(std::string_view data);
  // Returns the unterminated rest (with '\n' appended) when there is one.
  std::optional<std::string> Finish();

 private:
  size_t max_line_bytes_;
  std::string pending_;
  bool last_was_cr_ = false;
};

}  // namespace det::agent
