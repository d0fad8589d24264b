#pragma once
// The `environment` section: image (string or per-device map), environment_variables (list or
// per-device map), force_pull_image, registry_auth, ports, proxy_ports, add/drop_capabilities,
// pod_spec. Per-device values are normalized to a map keyed cpu, cuda, rocm (legacy `gpu` is
// cuda). Internal to master/config.

#include <nlohmann/json.hpp>

#include "master/config/experiment_config.h"
#include "master/config/problems.h"

namespace det::master::config::internal {

// The images used when neither the experiment nor the master names one.
inline constexpr const char* kDefaultCpuImage = "determinedai/pytorch-ngc-dev:0736b6d";
inline constexpr const char* kDefaultCudaImage = "determinedai/pytorch-ngc-dev:0736b6d";
inline constexpr const char* kDefaultRocmImage = "determinedai/pytorch-ngc-dev:0736b6d";

// `task_defaults` is ConfigDefaults::task_container_defaults (may be null): its image,
// environment_variables, force_pull_image, registry_auth and capabilities sit under the
// experiment's (environment variables: the master's first, so the experiment's win).
EnvironmentConfig ParseEnvironment(const nlohmann::json& in, const nlohmann::json& task_defaults,
                                   nlohmann::json* defaulted, Problems* problems);

}  // namespace det::master::config::internal
