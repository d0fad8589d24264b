#pragma once
// `det checkpoint download`: fetching a checkpoint's files, as Determined's
// `Checkpoint.download` does.
//   direct: `python3 -m determined.common.checkpoint_download --storage-config JSON --uuid U
//           -o DIR` reads the checkpoint storage itself (python: $DET_PYTHON_EXECUTABLE, else
//           /usr/bin/python3; PYTHONPATH gets the harness directory next to `det`);
//   master: `GET /checkpoints/{uuid}` with `Accept: application/gzip`, extracted under DIR;
//   auto:   direct, then master when that fails (except for azure storage).
// The target defaults to `checkpoints/<uuid>` and is left alone when it already holds
// `metadata.json` (or `MLmodel`); a missing `metadata.json` is written from the API's metadata.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/session.h"
#include "common/status.h"

namespace det::cli {

enum class DownloadMode { kDirect, kMaster, kAuto };

// "direct" | "master" | "auto".
Result<DownloadMode> ParseDownloadMode(const std::string& text);

// The target directory: `output` or `checkpoints/<uuid>`.
std::string DownloadTarget(const std::string& uuid, const std::optional<std::string>& output);

// True when `dir` holds `metadata.json` or `MLmodel`.
bool HoldsCheckpoint(const std::string& dir);

// Checks the state (COMPLETED or PARTIALLY_DELETED) and the storage config of `checkpoint`
// (a Checkpoint object); returns the `checkpoint_storage` section.
Result<nlohmann::json> DownloadableStorage(const nlohmann::json& checkpoint);

// Downloads `checkpoint` into `target`; returns the target.
Result<std::string> DownloadCheckpoint(Session& session, const nlohmann::json& checkpoint,
                                       const std::optional<std::string>& output,
                                       DownloadMode mode);

}  // namespace det::cli
