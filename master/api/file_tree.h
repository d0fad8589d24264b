#pragma once
// The model definition of an experiment as Determined's FileNode tree
// (GET /api/v1/experiments/{id}/file_tree) and one file's bytes
// (POST /api/v1/experiments/{id}/file). Pure: works on the entries of the stored context.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/archive.h"
#include "common/status.h"

namespace det::master::api {

// The FileNode list of the top directory: {path, name, modifiedTime, contentLength, isDir,
// contentType, files}. Directories the archive only implies (a/b.py without a/) are added;
// each level lists directories first, then files, by name.
nlohmann::json FileTreeJson(const std::vector<ArchiveEntry>& entries);

// The bytes of the file at `path`; InvalidArgument for a path that is empty, absolute or has
// '..'; NotFound when no file has that path (a directory is not a file).
Result<std::string> FileContent(const std::vector<ArchiveEntry>& entries, const std::string& path);

// "text/plain; charset=utf-8" when the first 512 bytes look like text, else
// "application/octet-stream" (the two answers of Go's http.DetectContentType that matter here).
std::string DetectContentType(const std::string& content);

}  // namespace det::master::api
