#include "cli/config_override.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>
#include <cstdlib>
#include <limits>
#include <regex>

namespace det::cli {
namespace {

using ojson = nlohmann::ordered_json;

bool IsOneOf(const std::string& s, std::initializer_list<const char*> options) {
  for (const char* o : options) {
    if (s == o) return true;
  }
  return false;
}

// Resolves a plain (unquoted) YAML scalar to a typed JSON value.
ojson ResolvePlainScalar(const std::string& s) {
  if (IsOneOf(s, {"", "~", "null", "Null", "NULL"})) return nullptr;
  if (IsOneOf(s, {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"})) return true;
  if (IsOneOf(s, {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"})) {
    return false;
  }
  static const std::regex kDecInt("[-+]?(0|[1-9][0-9_]*)");
  static const std::regex kHexInt("0x[0-9a-fA-F_]+");
  static const std::regex kOctInt("0o?[0-7_]+");
  static const std::regex kFloat(
      "[-+]?(\\.[0-9]+|[0-9][0-9_]*(\\.[0-9_]*)?)([eE][-+]?[0-9]+)?");
  auto strip_underscores = [](std::string v) {
    v.erase(std::remove(v.begin(), v.end(), '_'), v.end());
    return v;
  };
  if (std::regex_match(s, kDecInt)) {
    std::string v = strip_underscores(s);
    errno = 0;
    long long n = std::strtoll(v.c_str(), nullptr, 10);
    if (errno == 0) return n;
    return std::strtod(v.c_str(), nullptr);
  }
  if (std::regex_match(s, kHexInt)) {
    return std::strtoll(strip_underscores(s.substr(2)).c_str(), nullptr, 16);
  }
  if (s.size() > 1 && std::regex_match(s, kOctInt)) {
    std::string digits = s[1] == 'o' ? s.substr(2) : s.substr(1);
    return std::strtoll(strip_underscores(digits).c_str(), nullptr, 8);
  }
  if (std::regex_match(s, kFloat)) return std::strtod(strip_underscores(s).c_str(), nullptr);
  if (IsOneOf(s, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"})) {
    return std::numeric_limits<double>::infinity();
  }
  if (IsOneOf(s, {"-.inf", "-.Inf", "-.INF"})) return -std::numeric_limits<double>::infinity();
  if (IsOneOf(s, {".nan", ".NaN", ".NAN"})) return std::numeric_limits<double>::quiet_NaN();
  return s;
}

ojson NodeToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar:
      // yaml-cpp tags plain scalars "?" and quoted ones "!".
      if (node.Tag() == "!") return node.Scalar();
      if (node.Tag() == "tag:yaml.org,2002:str" || node.Tag() == "!!str") return node.Scalar();
      return ResolvePlainScalar(node.Scalar());
    case YAML::NodeType::Sequence: {
      ojson arr = ojson::array();
      for (const YAML::Node& child : node) arr.push_back(NodeToJson(child));
      return arr;
    }
    case YAML::NodeType::Map: {
      ojson obj = ojson::object();
      for (const auto& kv : node) {
        std::string key = kv.first.IsScalar() ? kv.first.Scalar() : YAML::Dump(kv.first);
        obj[key] = NodeToJson(kv.second);
      }
      return obj;
    }
  }
  return nullptr;
}

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Steps into element `index` of `*cur` (a list; index == size appends).
Result<ojson*> StepIndex(ojson* cur, const std::string& index, const std::string& item) {
  if (!cur->is_array()) {
    return InvalidArgument("could not read configuration option '" + item + "': index [" + index +
                           "] of a value that is not a list");
  }
  if (index.size() > 9) {
    return InvalidArgument("could not read configuration option '" + item + "': index " + index +
                           " is too large");
  }
  size_t i = std::stoul(index);
  if (i > cur->size()) {
    return InvalidArgument("could not read configuration option '" + item + "': index " + index +
                           " is past the end of a list of " + std::to_string(cur->size()));
  }
  if (i == cur->size()) cur->push_back(nullptr);
  return &(*cur)[i];
}

// Sets `value` at the dotted `key` ("a.b.c", "bind_mounts[0].read_only" or
// "bind_mounts.0.read_only"), creating missing maps on the way.
Status SetPath(ojson* config, const std::string& key, ojson value, const std::string& item) {
  ojson* cur = config;
  size_t start = 0;
  while (true) {
    size_t dot = key.find('.', start);
    std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    std::string name = part.substr(0, part.find('['));
    std::vector<std::string> indices;
    for (size_t open = part.find('['); open != std::string::npos; open = part.find('[', open + 1)) {
      size_t close = part.find(']', open);
      std::string index = close == std::string::npos ? "" : part.substr(open + 1, close - open - 1);
      if (!AllDigits(index)) {
        return InvalidArgument("could not read configuration option '" + item +
                               "': bad list index in '" + part + "'");
      }
      indices.push_back(index);
    }
    if (name.empty() && indices.empty()) {
      return InvalidArgument("could not read configuration option '" + item +
                             "': empty key segment");
    }
    if (!name.empty()) {
      if (cur->is_array() && AllDigits(name)) {
        DET_ASSIGN_OR_RETURN(cur, StepIndex(cur, name, item));
      } else {
        if (!cur->is_object()) *cur = ojson::object();
        cur = &(*cur)[name];
      }
    }
    for (const std::string& index : indices) {
      DET_ASSIGN_OR_RETURN(cur, StepIndex(cur, index, item));
    }
    if (dot == std::string::npos) {
      *cur = std::move(value);
      return Status::Ok();
    }
    start = dot + 1;
  }
}

}  // namespace

Result<ojson> YamlToJson(std::string_view yaml_text) {
  try {
    YAML::Node node = YAML::Load(std::string(yaml_text));
    return NodeToJson(node);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string("invalid YAML: ") + e.what());
  }
}

Result<ojson> ParseOverrideValue(std::string_view value) {
  std::string v(value);
  // A flow collection ("[1, 2]", "{a: 1, b: 2}") is one YAML value, commas and all.
  bool flow = !v.empty() && (v.front() == '[' || v.front() == '{');
  if (!flow && v.find(',') != std::string::npos) {
    ojson arr = ojson::array();
    size_t start = 0;
    while (true) {
      size_t pos = v.find(',', start);
      std::string part = v.substr(start, pos == std::string::npos ? std::string::npos : pos - start);
      DET_ASSIGN_OR_RETURN(ojson item, YamlToJson(part));
      arr.push_back(std::move(item));
      if (pos == std::string::npos) break;
      start = pos + 1;
    }
    return arr;
  }
  return YamlToJson(v);
}

Result<std::string> ApplyConfigOverrides(std::string_view yaml_text,
                                         const std::vector<std::string>& overrides) {
  if (overrides.empty()) return std::string(yaml_text);
  DET_ASSIGN_OR_RETURN(ojson config, YamlToJson(yaml_text));
  if (config.is_null()) config = ojson::object();
  if (!config.is_object()) return InvalidArgument("the experiment config is not a YAML map");
  for (const std::string& item : overrides) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgument("could not read configuration option '" + item +
                             "': expected key.path=value");
    }
    std::string key = item.substr(0, eq);
    DET_ASSIGN_OR_RETURN(ojson value, ParseOverrideValue(item.substr(eq + 1)));
    DET_RETURN_IF_ERROR(SetPath(&config, key, std::move(value), item));
  }
  try {
    return config.dump(2);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("cannot encode the config: ") + e.what());
  }
}

}  // namespace det::cli
