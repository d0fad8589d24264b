#pragma once
// Context archives: a list of files <-> a gzip-compressed tar (libarchive).

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace det {

struct ArchiveEntry {
  std::string path;      // relative, '/'-separated
  bool is_dir = false;
  std::string content;   // file bytes; empty for directories
  uint32_t mode = 0644;
  int64_t mtime = 0;     // seconds since epoch
};

// Builds a tar.gz in memory. Fails on absolute paths or ".." components.
Result<std::string> CreateTarGz(const std::vector<ArchiveEntry>& entries);

// Reads every entry of a tar or tar.gz held in memory.
Result<std::vector<ArchiveEntry>> ReadArchive(const std::string& data);

// Extracts a tar.gz under `dest_dir`; refuses any entry that would land outside it (absolute
// paths, "..", links pointing outside).
Status ExtractTarGz(const std::string& data, const std::string& dest_dir);

// True when `path` is relative and has no "." / ".." / empty components.
bool IsSafeRelativePath(const std::string& path);

}  // namespace det
