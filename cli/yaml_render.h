#pragma once
// JSON as block-style YAML, the way Determined's CLI prints configs (`det template describe`,
// `det template list --details`): mappings in key order, lists as "- " items.

#include <nlohmann/json.hpp>
#include <string>

namespace det::cli {

std::string RenderYaml(const nlohmann::json& value);

}  // namespace det::cli
