#pragma once
// GitignoreMatcher: decides whether a relative path is ignored by a list of gitignore-syntax
// patterns (a `.detignore` file plus built-in ignores). Patterns are matched segment by
// segment with fnmatch(3); `**` matches any number of path segments.
//
// Supported syntax: comments (`#`), blank lines, negation (`!`), trailing `/` (directories
// only), a leading or middle `/` anchoring the pattern at the root, `**`, and patterns without
// a slash matching any path component (the base name at any depth). As in git, a path inside
// an ignored directory is ignored whatever later patterns say. Thread-compatible.

#include <string>
#include <string_view>
#include <vector>

namespace det::cli {

class GitignoreMatcher {
 public:
  GitignoreMatcher() = default;

  // Adds the patterns of one gitignore-syntax text (one pattern per line). Later patterns
  // override earlier ones.
  void AddPatterns(std::string_view text);
  // Adds one pattern line.
  void AddPattern(std::string_view line);
  // Adds Determined's built-in ignores (`__pycache__/`, `*.py[co]`, `.git/`, ...).
  void AddBuiltinIgnores();

  // True if `path` (relative, '/'-separated, no leading "./") is ignored, either itself or
  // because one of its parent directories is.
  bool IsIgnored(std::string_view path, bool is_dir) const;

  // True if `path` itself matches (ignoring the state of its parent directories).
  bool MatchesSelf(std::string_view path, bool is_dir) const;

  size_t size() const { return patterns_.size(); }

 private:
  struct Pattern {
    std::vector<std::string> segments;  // the pattern split on '/'
    bool negate = false;
    bool dir_only = false;
    bool anchored = false;  // matched against the whole path, else against the base name
  };
  std::vector<Pattern> patterns_;
};

// The built-in ignore patterns, in the order they are added.
const std::vector<std::string>& BuiltinIgnorePatterns();

}  // namespace det::cli
