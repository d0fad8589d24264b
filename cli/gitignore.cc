#include "cli/gitignore.h"

#include <fnmatch.h>

namespace det::cli {
namespace {

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.emplace_back(s.substr(start));
      return out;
    }
    out.emplace_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

bool SegmentMatches(const std::string& pattern, const std::string& segment) {
  return fnmatch(pattern.c_str(), segment.c_str(), 0) == 0;
}

// Matches pattern segments [pi..) against path segments [si..). A `**` segment matches zero or
// more path segments, except that a trailing `**` needs at least one (`foo/**` matches what is
// inside `foo`, not `foo` itself).
bool MatchSegments(const std::vector<std::string>& pat, size_t pi,
                   const std::vector<std::string>& path, size_t si) {
  while (pi < pat.size()) {
    if (pat[pi] == "**") {
      if (pi + 1 == pat.size()) return si < path.size();
      for (size_t k = si; k <= path.size(); ++k) {
        if (MatchSegments(pat, pi + 1, path, k)) return true;
      }
      return false;
    }
    if (si >= path.size() || !SegmentMatches(pat[pi], path[si])) return false;
    ++pi;
    ++si;
  }
  return si == path.size();
}

}  // namespace

const std::vector<std::string>& BuiltinIgnorePatterns() {
  static const std::vector<std::string> kPatterns = {
      "__pycache__/", "*.py[co]", ".git/", ".vscode/", ".idea/", ".mypy_cache/",
  };
  return kPatterns;
}

void GitignoreMatcher::AddPatterns(std::string_view text) {
  for (const std::string& line : Split(text, '\n')) AddPattern(line);
}

void GitignoreMatcher::AddBuiltinIgnores() {
  for (const std::string& p : BuiltinIgnorePatterns()) AddPattern(p);
}

void GitignoreMatcher::AddPattern(std::string_view line) {
  std::string p(line);
  if (!p.empty() && p.back() == '\r') p.pop_back();
  // Trailing spaces are ignored unless escaped with a backslash.
  while (!p.empty() && p.back() == ' ' && !(p.size() >= 2 && p[p.size() - 2] == '\\')) {
    p.pop_back();
  }
  if (p.empty() || p[0] == '#') return;
  Pattern pattern;
  if (p[0] == '!') {
    pattern.negate = true;
    p.erase(0, 1);
  } else if (p.size() >= 2 && p[0] == '\\' && (p[1] == '#' || p[1] == '!')) {
    p.erase(0, 1);
  }
  if (!p.empty() && p.back() == '/') {
    pattern.dir_only = true;
    while (!p.empty() && p.back() == '/') p.pop_back();
  }
  if (p.empty()) return;
  if (p.find('/') != std::string::npos) pattern.anchored = true;
  while (!p.empty() && p[0] == '/') p.erase(0, 1);
  if (p.empty()) return;
  for (std::string& seg : Split(p, '/')) {
    if (seg.empty()) continue;  // collapse "a//b"
    pattern.segments.push_back(std::move(seg));
  }
  if (pattern.segments.empty()) return;
  patterns_.push_back(std::move(pattern));
}

bool GitignoreMatcher::MatchesSelf(std::string_view path, bool is_dir) const {
  std::vector<std::string> segments;
  for (std::string& seg : Split(path, '/')) {
    if (!seg.empty() && seg != ".") segments.push_back(std::move(seg));
  }
  if (segments.empty()) return false;
  bool ignored = false;
  for (const Pattern& p : patterns_) {
    if (p.dir_only && !is_dir) continue;
    bool match;
    if (p.anchored) {
      match = MatchSegments(p.segments, 0, segments, 0);
    } else {
      match = SegmentMatches(p.segments[0], segments.back());
    }
    if (match) ignored = !p.negate;
  }
  return ignored;
}

bool GitignoreMatcher::IsIgnored(std::string_view path, bool is_dir) const {
  // A path inside an ignored directory is ignored: check each parent first.
  size_t pos = 0;
  while (true) {
    pos = path.find('/', pos);
    if (pos == std::string_view::npos) break;
    if (pos > 0 && MatchesSelf(path.substr(0, pos), /*is_dir=*/true)) return true;
    ++pos;
  }
  return MatchesSelf(path, is_dir);
}

}  // namespace det::cli
