#include "cli/context_packer.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cli/format.h"
#include "cli/gitignore.h"
#include "common/base64.h"

namespace det::cli {
namespace {

namespace fs = std::filesystem;

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Internal("cannot read " + path);
  return ss.str();
}

Result<GitignoreMatcher> MatcherFor(const fs::path& root) {
  GitignoreMatcher m;
  m.AddBuiltinIgnores();
  fs::path detignore = root / ".detignore";
  std::error_code ec;
  if (fs::is_regular_file(detignore, ec)) {
    DET_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(detignore.string()));
    m.AddPatterns(text);
  }
  return m;
}

Result<ContextEntry> EntryFor(const fs::path& local, const std::string& rel) {
  struct stat st;
  if (stat(local.c_str(), &st) != 0) {
    return NotFound("cannot stat " + local.string());
  }
  ContextEntry e;
  e.path = rel;
  e.local_path = local.string();
  e.mtime = static_cast<int64_t>(st.st_mtime);
  e.mode = static_cast<uint32_t>(st.st_mode & 07777);
  if (S_ISDIR(st.st_mode)) {
    e.type = kFileTypeDirectory;
  } else if (S_ISREG(st.st_mode)) {
    e.type = kFileTypeRegular;
    e.size = static_cast<uint64_t>(st.st_size);
  } else {
    return FailedPrecondition("not a regular file or directory");
  }
  return e;
}

// Walks `dir` (whose relative path is `rel_dir`, "" for a root), appending entries in sorted
// order, a directory before its contents. `match_prefix` is the path of `dir` relative to the
// root whose `.detignore` applies.
Status Walk(const fs::path& dir, const std::string& rel_dir, const std::string& match_prefix,
            const GitignoreMatcher& matcher, std::vector<ContextEntry>* out) {
  std::error_code ec;
  std::vector<fs::path> children;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    children.push_back(it->path());
  }
  if (ec) return Internal("cannot list " + dir.string() + ": " + ec.message());
  std::sort(children.begin(), children.end());
  for (const fs::path& child : children) {
    std::string name = child.filename().string();
    std::string rel = rel_dir.empty() ? name : rel_dir + "/" + name;
    std::string match_rel = match_prefix.empty() ? name : match_prefix + "/" + name;
    Result<ContextEntry> entry = EntryFor(child, rel);
    if (!entry.ok()) continue;  // dangling links, sockets, fifos: skipped
    bool is_dir = entry->type == kFileTypeDirectory;
    if (matcher.MatchesSelf(match_rel, is_dir)) continue;
    out->push_back(*entry);
    std::error_code lec;
    if (is_dir && !fs::is_symlink(child, lec)) {
      DET_RETURN_IF_ERROR(Walk(child, rel, match_rel, matcher, out));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<ContextEntry>> ListContext(const std::string& context_dir,
                                              const std::vector<std::string>& includes) {
  std::vector<ContextEntry> entries;
  // No context directory: the experiment gets only the includes (possibly no files at all).
  if (!context_dir.empty()) {
    std::error_code ec;
    fs::path root(context_dir);
    if (!fs::is_directory(root, ec)) {
      return InvalidArgument("context directory " + context_dir + " is not a directory");
    }
    DET_ASSIGN_OR_RETURN(GitignoreMatcher matcher, MatcherFor(root));
    DET_RETURN_IF_ERROR(Walk(root, "", "", matcher, &entries));
  }

  std::set<std::string> roots;
  for (const ContextEntry& e : entries) {
    if (e.path.find('/') == std::string::npos) roots.insert(e.path);
  }
  for (const std::string& include : includes) {
    fs::path p = fs::path(include).lexically_normal();
    std::string name = p.filename().string();
    if (name.empty()) name = p.parent_path().filename().string();
    if (name.empty() || name == "." || name == "..") {
      return InvalidArgument("cannot include " + include + ": it has no base name");
    }
    if (!roots.insert(name).second) {
      return InvalidArgument("cannot include " + include + ": a path named '" + name +
                             "' is already in the context");
    }
    Result<ContextEntry> entry = EntryFor(p, name);
    if (!entry.ok()) return InvalidArgument("cannot include " + include + ": " + entry.status().message());
    entries.push_back(*entry);
    if (entry->type == kFileTypeDirectory) {
      DET_ASSIGN_OR_RETURN(GitignoreMatcher inc_matcher, MatcherFor(p));
      DET_RETURN_IF_ERROR(Walk(p, name, "", inc_matcher, &entries));
    }
  }
  return entries;
}

Result<PackedContext> PackContext(const std::string& context_dir,
                                  const std::vector<std::string>& includes, uint64_t max_bytes) {
  DET_ASSIGN_OR_RETURN(std::vector<ContextEntry> entries, ListContext(context_dir, includes));
  return PackEntries(entries, max_bytes);
}

Result<PackedContext> PackEntries(const std::vector<ContextEntry>& entries, uint64_t max_bytes) {
  PackedContext packed;
  for (const ContextEntry& e : entries) {
    packed.total_bytes += e.size;
    if (e.type == kFileTypeRegular) ++packed.num_files;
  }
  if (packed.total_bytes >= max_bytes) {
    return InvalidArgument("the context directory and included paths hold " +
                           FormatSize(static_cast<double>(packed.total_bytes)) + " (" +
                           std::to_string(packed.total_bytes) +
                           " bytes), which exceeds the maximum allowed size of " +
                           FormatSize(static_cast<double>(max_bytes)) + " (" +
                           std::to_string(max_bytes) +
                           " bytes); list large files in a .detignore file to leave them out");
  }
  packed.total_bytes = 0;
  for (const ContextEntry& e : entries) {
    std::string content;
    if (e.type == kFileTypeRegular) {
      DET_ASSIGN_OR_RETURN(std::string data, ReadWholeFile(e.local_path));
      packed.total_bytes += data.size();
      content = Base64Encode(data);
    }
    packed.files.push_back({{"path", e.path},
                            {"type", e.type},
                            {"content", std::move(content)},
                            {"mtime", std::to_string(e.mtime)},
                            {"mode", e.mode},
                            {"uid", 0},
                            {"gid", 0}});
  }
  if (packed.total_bytes >= max_bytes) {
    return InvalidArgument("the context directory grew to " +
                           FormatSize(static_cast<double>(packed.total_bytes)) +
                           " while it was read, which exceeds the maximum allowed size of " +
                           FormatSize(static_cast<double>(max_bytes)));
  }
  return packed;
}

}  // namespace det::cli
