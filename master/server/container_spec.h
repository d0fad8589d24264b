#pragma once
// ContainerSpecFor: what an agent needs to run a trial in a container image, built from the
// experiment's defaulted config. Pure (no I/O); sent as the `container` field of a start command
// (api/agent-protocol.md).

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/status.h"
#include "master/config/experiment_config.h"

namespace det::master::server {

// "4G", "1.5gb", "512 Mi", "100k", "1024b" or "1024" -> bytes. Suffixes are binary multiples
// (k = 1024), as Docker reads --shm-size.
Result<int64_t> MemorySizeBytes(const std::string& text);

// The container of a trial on an agent whose slots are of type `device` ("cpu", "cuda", "rocm"):
// null when the image for that device is the built-in default (the platform's process runtime
// runs the trial then), else {image, forcePull, registryAuth, bindMounts:[{hostPath,
// containerPath, readOnly, propagation}], shmSizeBytes, devices, addCapabilities,
// dropCapabilities}. A shared_fs checkpoint storage's host_path is mounted at the same path, so
// that checkpoints land where the master and other trials read them.
Result<std::optional<nlohmann::json>> ContainerSpecFor(const config::ExperimentConfig& cfg,
                                                       const std::string& device);

}  // namespace det::master::server
