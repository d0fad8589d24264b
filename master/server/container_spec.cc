#include "master/server/container_spec.h"

#include <cctype>
#include <cmath>

#include "master/config/environment_parse.h"

namespace det::master::server {

using nlohmann::json;

namespace {

bool IsBuiltInDefault(const std::string& device, const std::string& image) {
  namespace c = config::internal;
  if (device == "cuda") return image == c::kDefaultCudaImage;
  if (device == "rocm") return image == c::kDefaultRocmImage;
  return image == c::kDefaultCpuImage;
}

}  // namespace

Result<int64_t> MemorySizeBytes(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  std::string number = text.substr(0, i);
  std::string unit;
  for (size_t j = i; j < text.size(); ++j) {
    if (text[j] != ' ')
      unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[j])));
  }
  if (number.empty() || number == ".")
    return InvalidArgument("not a memory size: \"" + text + "\"");
  double value = 0;
  try {
    value = std::stod(number);
  } catch (...) {
    return InvalidArgument("not a memory size: \"" + text + "\"");
  }
  if (!unit.empty() && unit.back() == 'b') unit.pop_back();
  if (!unit.empty() && unit.back() == 'i') unit.pop_back();
  static const std::string kUnits = "kmgtp";
  double scale = 1;
  if (!unit.empty()) {
    size_t pos = unit.size() == 1 ? kUnits.find(unit[0]) : std::string::npos;
    if (pos == std::string::npos) return InvalidArgument("not a memory size: \"" + text + "\"");
    scale = std::pow(1024.0, static_cast<double>(pos + 1));
  }
  return static_cast<int64_t>(std::llround(value * scale));
}

Result<std::optional<json>> ContainerSpecFor(const config::ExperimentConfig& cfg,
                                             const std::string& device) {
  const auto& env = cfg.environment;
  auto image_it = env.image.find(device);
  if (image_it == env.image.end()) image_it = env.image.find("cpu");
  if (image_it == env.image.end() || image_it->second.empty() ||
      IsBuiltInDefault(device, image_it->second)) {
    return std::optional<json>();
  }
  json spec = {{"image", image_it->second},
               {"forcePull", env.force_pull_image},
               {"registryAuth", env.registry_auth.is_object() ? env.registry_auth : json()},
               {"addCapabilities", env.add_capabilities},
               {"dropCapabilities", env.drop_capabilities}};
  json mounts = json::array();
  for (const config::BindMount& m : cfg.bind_mounts) {
    mounts.push_back({{"hostPath", m.host_path},
                      {"containerPath", m.container_path},
                      {"readOnly", m.read_only},
                      {"propagation", m.propagation}});
  }
  const json& storage = cfg.checkpoint_storage;
  if (storage.is_object() && storage.value("type", "") == "shared_fs" &&
      storage.value("host_path", json()).is_string()) {
    std::string host = storage["host_path"].get<std::string>();
    bool mounted = false;
    for (const auto& m : mounts) mounted = mounted || m["containerPath"] == host;
    if (!mounted) {
      mounts.push_back({{"hostPath", host},
                        {"containerPath", host},
                        {"readOnly", false},
                        {"propagation", "rprivate"}});
    }
  }
  spec["bindMounts"] = std::move(mounts);
  const json& shm = cfg.resources.shm_size;
  if (shm.is_number_integer()) {
    spec["shmSizeBytes"] = shm.get<int64_t>();
  } else if (shm.is_string()) {
    auto bytes = MemorySizeBytes(shm.get<std::string>());
    if (!bytes.ok()) return InvalidArgument("resources.shm_size: " + bytes.status().message());
    spec["shmSizeBytes"] = *bytes;
  } else {
    spec["shmSizeBytes"] = nullptr;
  }
  json devices = json::array();
  if (cfg.resources.devices.is_array()) {
    for (const json& d : cfg.resources.devices) {
      if (!d.is_object()) continue;
      devices.push_back(d.value("host_path", "") + ":" + d.value("container_path", "") + ":" +
                        d.value("mode", "mrw"));
    }
  }
  spec["devices"] = std::move(devices);
  return std::optional<json>(std::move(spec));
}

}  // namespace det::master::server
