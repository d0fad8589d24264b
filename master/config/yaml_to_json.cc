// YamlToJson: YAML text to JSON with YAML 1.1-style scalar typing for plain scalars (what Go's
// yaml.v2 and PyYAML accept for configs) and quoted scalars kept as strings.

#include <charconv>
#include <cmath>
#include <limits>
#include <regex>
#include <string>

#include <yaml-cpp/yaml.h>

#include "master/config/experiment_config.h"

namespace det::master::config {

namespace {

using nlohmann::json;

constexpr std::string_view kStrTag = "tag:yaml.org,2002:str";

bool IsNullWord(const std::string& s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

std::optional<bool> BoolWord(const std::string& s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

// Parses an integer in `digits` (no sign) with `base`; applies `negative`. Values beyond int64
// become unsigned where positive, otherwise doubles, so large numbers are not lost.
json IntegerValue(std::string_view digits, int base, bool negative) {
  uint64_t u = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), u, base);
  if (ec == std::errc() && ptr == digits.data() + digits.size()) {
    if (!negative) {
      if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return json(static_cast<int64_t>(u));
      }
      return json(u);
    }
    if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) {
      return json(static_cast<int64_t>(0 - u));
    }
  }
  double d = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), d);
  return json(negative ? -d : d);
}

std::optional<json> NumberValue(const std::string& s) {
  static const std::regex kDecimal("[-+]?(0|[1-9][0-9]*)");
  static const std::regex kHex("[-+]?0x[0-9a-fA-F]+");
  static const std::regex kOctal("[-+]?0o?[0-7]+");
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  static const std::regex kInf("[-+]?\\.(inf|Inf|INF)");
  static const std::regex kNan("\\.(nan|NaN|NAN)");

  // libstdc++'s regex matcher recurses per character; no number needs this many.
  constexpr size_t kMaxNumberChars = 400;
  if (s.size() > kMaxNumberChars) return std::nullopt;
  bool negative = !s.empty() && s[0] == '-';
  std::string_view body = s;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) body.remove_prefix(1);

  if (std::regex_match(s, kDecimal)) return IntegerValue(body, 10, negative);
  if (std::regex_match(s, kHex)) return IntegerValue(body.substr(2), 16, negative);
  if (std::regex_match(s, kOctal)) {
    body.remove_prefix(body.size() > 1 && body[1] == 'o' ? 2 : 1);
    return IntegerValue(body, 8, negative);
  }
  if (std::regex_match(s, kFloat)) {
    // from_chars rejects a leading '+' and a bare leading '.', so normalize first.
    std::string text = std::string(body);
    if (text[0] == '.') text.insert(text.begin(), '0');
    double d = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (ec == std::errc::result_out_of_range) d = std::numeric_limits<double>::infinity();
    else if (ec != std::errc()) return std::nullopt;
    return json(negative ? -d : d);
  }
  if (std::regex_match(s, kInf)) {
    return json(negative ? -std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::infinity());
  }
  if (std::regex_match(s, kNan)) return json(std::numeric_limits<double>::quiet_NaN());
  return std::nullopt;
}

json ScalarValue(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  // yaml-cpp tags quoted scalars "!" and plain ones "?"; explicit !!str keeps text too.
  if (node.Tag() == "!" || node.Tag() == kStrTag) return json(text);
  if (IsNullWord(text)) return json(nullptr);
  if (auto b = BoolWord(text)) return json(*b);
  if (auto n = NumberValue(text)) return *n;
  return json(text);
}

// Flow collections ([ and {) nest by recursion in yaml-cpp, so a deep input would overflow the
// stack before the parser reports anything: count the brackets outside quotes and comments first.
// Block nesting needs indentation, so its depth is bounded by the line length checked here too.
std::optional<std::string> CheckNesting(std::string_view text) {
  int depth = 0;
  char quote = 0;
  bool comment = false;
  size_t line = 1, column = 0, indent = 0;
  bool at_line_start = true;
  for (char c : text) {
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
      indent = 0;
      at_line_start = true;
      comment = false;
      if (quote == '\'') quote = 0;
      continue;
    }
    if (at_line_start) {
      if (c == ' ' || c == '-') {
        ++indent;
        if (indent > static_cast<size_t>(kMaxYamlDepth) * 8) {
          return "line " + std::to_string(line) + ": indentation deeper than " +
                 std::to_string(kMaxYamlDepth * 8) + " columns";
        }
        continue;
      }
      at_line_start = false;
    }
    if (comment) continue;
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '#') comment = true;
    else if (c == '"' || c == '\'') quote = c;
    else if (c == '[' || c == '{') {
      if (++depth > kMaxYamlDepth) {
        return "line " + std::to_string(line) + ", column " + std::to_string(column) +
               ": nesting deeper than " + std::to_string(kMaxYamlDepth) + " levels";
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

class TooLarge : public std::exception {
 public:
  const char* what() const noexcept override { return "document too large or too deep"; }
};

// Throws YAML::Exception for keys that are not scalars; the caller converts. Throws TooLarge when
// aliases expand the document beyond kMaxYamlNodes nodes or kMaxYamlDepth levels.
json NodeToJson(const YAML::Node& node, int depth, int64_t* budget) {
  if (--*budget < 0 || depth > kMaxYamlDepth) throw TooLarge();
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return json(nullptr);
    case YAML::NodeType::Scalar:
      return ScalarValue(node);
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const YAML::Node& item : node) out.push_back(NodeToJson(item, depth + 1, budget));
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& entry : node) {
        if (!entry.first.IsScalar()) {
          throw YAML::ParserException(entry.first.Mark(), "mapping keys must be scalars");
        }
        out[entry.first.Scalar()] = NodeToJson(entry.second, depth + 1, budget);
      }
      return out;
    }
  }
  return json(nullptr);
}

}  // namespace

Result<nlohmann::json> YamlToJson(std::string_view yaml_text) {
  if (auto problem = CheckNesting(yaml_text)) return InvalidArgument("invalid yaml: " + *problem);
  try {
    YAML::Node root = YAML::Load(std::string(yaml_text));
    int64_t budget = kMaxYamlNodes;
    return NodeToJson(root, 0, &budget);
  } catch (const TooLarge& e) {
    return InvalidArgument("invalid yaml: more than " + std::to_string(kMaxYamlNodes) +
                           " values or " + std::to_string(kMaxYamlDepth) +
                           " levels after expanding aliases");
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) return InvalidArgument("invalid yaml: " + e.msg);
    return InvalidArgument("invalid yaml: line " + std::to_string(e.mark.line + 1) + ", column " +
                           std::to_string(e.mark.column + 1) + ": " + e.msg);
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("invalid yaml: ") + e.what());
  }
}

}  // namespace det::master::config
