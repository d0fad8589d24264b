#pragma once
// A resource pool's task_container_defaults over the master's, as Determined merges them for
// the tasks and trials of that pool: the pool's environment variables over the master's of the
// same name (per device when either gives a per-device map), its bind mounts and devices first
// with the master's for other container paths after, capabilities unioned, and any other key
// the pool sets (startup_hook, image, shm_size, ...) replacing the master's. Pure.

#include <nlohmann/json.hpp>

namespace det::master::config {

// Either may be null (no defaults); the result is null only when both are.
nlohmann::json MergeTaskContainerDefaults(const nlohmann::json& master, const nlohmann::json& pool);

}  // namespace det::master::config
