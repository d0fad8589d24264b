#pragma once
// PackContext: turns an experiment's context directory (plus `-i/--include` paths) into the
// `modelDefinition` file list of `POST /api/v1/experiments`, the way Determined's CLI does:
// paths relative to the root, directories (type 53, empty content) before their contents,
// regular files (type 48, base64 content), permission bits as `mode`, `mtime` as a decimal
// string. A top-level `.detignore` (gitignore syntax) and the built-in ignores leave paths
// out. Included directories keep their base name as a prefix.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace det::cli {

// Determined's MAX_CONTEXT_SIZE: 95 MiB of decoded content.
inline constexpr uint64_t kMaxContextBytes = 95ull * 1024 * 1024;

inline constexpr int kFileTypeRegular = 48;    // tar '0'
inline constexpr int kFileTypeDirectory = 53;  // tar '5'

struct ContextEntry {
  std::string path;        // relative, '/'-separated
  std::string local_path;  // where to read it
  int type = kFileTypeRegular;
  uint64_t size = 0;
  int64_t mtime = 0;
  uint32_t mode = 0;
};

struct PackedContext {
  nlohmann::json files = nlohmann::json::array();  // [File]
  uint64_t total_bytes = 0;                        // decoded content size
  size_t num_files = 0;                            // regular files
};

// Lists what would be sent, without reading contents. An empty `context_dir` lists only the
// includes.
Result<std::vector<ContextEntry>> ListContext(const std::string& context_dir,
                                              const std::vector<std::string>& includes);

// Checks the total size of `entries` against `max_bytes` (failing with "maximum allowed size"
// when it is >= the limit) and reads the files.
Result<PackedContext> PackEntries(const std::vector<ContextEntry>& entries,
                                  uint64_t max_bytes = kMaxContextBytes);

// Lists, checks the size against `max_bytes` (failing with "maximum allowed size" when the
// total is >= it) and reads the files.
Result<PackedContext> PackContext(const std::string& context_dir,
                                  const std::vector<std::string>& includes,
                                  uint64_t max_bytes = kMaxContextBytes);

}  // namespace det::cli
