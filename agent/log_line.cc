#include "agent/log_line.h"

#include <array>
#include <charconv>

namespace det::agent {
namespace {

void SkipOneSpace(std::string_view& s) {
  if (!s.empty() && s.front() == ' ') s.remove_prefix(1);
}

// Matches ` ?[rank=N] ?` at the start of `s`; on success strips it and returns N.
std::optional<int> StripRank(std::string_view& s) {
  std::string_view t = s;
  SkipOneSpace(t);
  constexpr std::string_view kOpen = "[rank=";
  if (t.substr(0, kOpen.size()) != kOpen) return std::nullopt;
  t.remove_prefix(kOpen.size());
  size_t digits = 0;
  while (digits < t.size() && t[digits] >= '0' && t[digits] <= '9') ++digits;
  if (digits == 0 || digits >= t.size() || t[digits] != ']') return std::nullopt;
  int rank = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + digits, rank);
  if (ec != std::errc()) return std::nullopt;
  t.remove_prefix(digits + 1);
  SkipOneSpace(t);
  s = t;
  return rank;
}

std::optional<std::string> StripLevel(std::string_view& s) {
  static constexpr std::array<std::string_view, 5> kLevels = {"DEBUG", "INFO", "WARNING", "ERROR",
                                                              "CRITICAL"};
  std::string_view t = s;
  SkipOneSpace(t);
  for (std::string_view level : kLevels) {
    if (t.size() > level.size() && t.substr(0, level.size()) == level && t[level.size()] == ':') {
      t.remove_prefix(level.size() + 1);
      SkipOneSpace(t);
      s = t;
      return "LOG_LEVEL_" + std::string(level);
    }
  }
  return std::nullopt;
}

}  // namespace

ParsedLogLine ParseLogLine(std::string_view line) {
  ParsedLogLine out;
  out.rank_id = StripRank(line);
  out.level = StripLevel(line);
  out.log = std::string(line);
  return out;
}

std::vector<std::string> LineSplitter::Feed(std::string_view data) {
  std::vector<std::string> lines;
  for (char c : data) {
    if (c == '\n' && last_was_cr_) {
      last_was_cr_ = false;  // second half of "\r\n": the line was already emitted
      continue;
    }
    last_was_cr_ = (c == '\r');
    if (c == '\n' || c == '\r') {
      pending_.push_back('\n');
      lines.push_back(std::move(pending_));
      pending_.clear();
      continue;
    }
    pending_.push_back(c);
    if (pending_.size() >= max_line_bytes_) {
      pending_.push_back('\n');
      lines.push_back(std::move(pending_));
      pending_.clear();
    }
  }
  return lines;
}

std::optional<std::string> LineSplitter::Finish() {
  last_was_cr_ = false;
  if (pending_.empty()) return std::nullopt;
  std::string line = std::move(pending_);
  pending_.clear();
  line.push_back('\n');
  return line;
}

}  // namespace det::agent
