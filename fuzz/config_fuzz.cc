// libFuzzer target for the experiment-config parser: YamlToJson, ParseExperimentConfig,
// ExperimentConfigFromJson and MakeTestModeConfig must never crash, hang or leak on any input,
// and a config that parses must rebuild from its defaulted form unchanged.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "master/config/experiment_config.h"

namespace {

namespace config = det::master::config;

void CheckRoundTrip(const config::ExperimentConfig& cfg) {
  det::Result<config::ExperimentConfig> again = config::ExperimentConfigFromJson(cfg.defaulted);
  if (!again.ok() || again->defaulted != cfg.defaulted) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  config::ConfigDefaults defaults;
  defaults.checkpoint_storage = {{"type", "shared_fs"}, {"host_path", "/tmp/ckpt"}};
  defaults.experiment_seed = 1;
  det::Result<config::ExperimentConfig> cfg = config::ParseExperimentConfig(text, defaults);
  if (cfg.ok()) CheckRoundTrip(*cfg);

  det::Result<nlohmann::json> doc = config::YamlToJson(text);
  if (doc.ok() && doc->is_object()) {
    nlohmann::json test_config = config::MakeTestModeConfig(*doc, size);
    det::Result<config::ExperimentConfig> test_cfg = config::ParseExperimentConfig(
        test_config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), defaults);
    if (test_cfg.ok()) CheckRoundTrip(*test_cfg);
  }
  return 0;
}
