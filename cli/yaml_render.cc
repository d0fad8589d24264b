#include "cli/yaml_render.h"

#include <yaml-cpp/yaml.h>

namespace det::cli {
namespace {

void Emit(YAML::Emitter& out, const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::object:
      out << YAML::BeginMap;
      for (auto it = v.begin(); it != v.end(); ++it) {
        out << YAML::Key << it.key() << YAML::Value;
        Emit(out, it.value());
      }
      out << YAML::EndMap;
      break;
    case nlohmann::json::value_t::array:
      out << YAML::BeginSeq;
      for (const auto& e : v) Emit(out, e);
      out << YAML::EndSeq;
      break;
    case nlohmann::json::value_t::string:
      out << v.get<std::string>();
      break;
    case nlohmann::json::value_t::null:
      out << YAML::Null;
      break;
    default:  // numbers and booleans print as JSON does
      out << v.dump();
      break;
  }
}

}  // namespace

std::string RenderYaml(const nlohmann::json& value) {
  if ((value.is_object() || value.is_array()) && value.empty()) return value.dump() + "\n";
  YAML::Emitter out;
  out.SetIndent(2);
  out << YAML::Block;
  Emit(out, value);
  return std::string(out.c_str()) + "\n";
}

}  // namespace det::cli
