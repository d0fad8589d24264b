#pragma once
// Parsing of `resources` and `bind_mounts`.

#include <nlohmann/json.hpp>

#include "master/config/experiment_config.h"
#include "master/config/problems.h"

namespace det::master::config::internal {

ResourcesConfig ParseResources(const nlohmann::json& in, nlohmann::json* defaulted,
                               Problems* problems);

// Each mount needs an absolute `host_path` and a `container_path` other than "."; `read_only`
// defaults to false and `propagation` to "rprivate".
// resources.devices: maps {host_path, container_path, mode (mrw)} or "host:container[:mode]".
nlohmann::json ParseDevices(const nlohmann::json& in, std::string_view path, Problems* problems);

nlohmann::json ParseBindMounts(const nlohmann::json& in, Problems* problems);

}  // namespace det::master::config::internal
