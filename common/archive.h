#pragma once
// Context archives: a list of files <-> a gzip-compressed tar (libarchive).

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace det {

struct ArchiveEntry {
  std::string path;  // relative, '/'-separated
  bool is_dir = false;
  std::string content;  // file bytes; empty for directories
  uint32_t mode = 0644;
  int64_t mtime = 0;  // seconds since epoch
};

// Builds a tar.gz in memory. Fails on absolute paths or ".." components.
Result<std::string> CreateTarGz(const std::vector<ArchiveEntry>& entries);

// Bounds on what an archive may expand to (a decompression bomb declares or holds far more than
// its compressed size): the sum of the sizes its entries declare, and the number of entries.
struct ArchiveLimits {
  uint64_t max_total_bytes = 1ull << 30;
  uint64_t max_entries = 1000000;
};

// Reads every entry of a tar or tar.gz held in memory. Refuses, naming the entry and the rule:
// absolute paths, ".." components, links (symbolic and hard), devices, fifos and sockets, and
// an archive whose entries declare more than the limits allow.
Result<std::vector<ArchiveEntry>> ReadArchive(const std::string& data,
                                              const ArchiveLimits& limits = {});

// Extracts a tar or tar.gz under `dest_dir`, streaming each file to disk, with ReadArchive's
// rules; also refuses to write through a symbolic link already under `dest_dir`. Nothing is
// written outside `dest_dir`; an archive refused part way leaves the entries before it.
Status ExtractTarGz(const std::string& data, const std::string& dest_dir,
                    const ArchiveLimits& limits = {.max_total_bytes = 64ull << 30});

// True when `path` is relative and has no "." / ".." / empty components.
bool IsSafeRelativePath(const std::string& path);

}  // namespace det
