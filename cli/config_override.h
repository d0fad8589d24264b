#pragma once
// `det experiment create --config key.path=value`: applies dotted-path overrides to a YAML
// experiment config, the way Determined's CLI does (`yaml.safe_load` of each value, a value with
// commas becomes a list, missing intermediate maps are created).

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace det::cli {

// Parses YAML text into JSON (map order kept). Plain scalars are typed: null/~ -> null,
// true/false/yes/no/on/off -> bool, integers (decimal, 0x, 0o) -> int, floats (`1.5`, `1e-3`,
// `.inf`, `.nan`) -> float, anything else -> string. Quoted scalars stay strings.
Result<nlohmann::ordered_json> YamlToJson(std::string_view yaml_text);

// Parses one override value as a YAML scalar (or flow collection); a value containing a comma
// becomes a list of such values.
Result<nlohmann::ordered_json> ParseOverrideValue(std::string_view value);

// Applies `overrides` ("a.b.c=value") to `yaml_text`. With no overrides the text comes back
// unchanged; otherwise the result is JSON text (which is valid YAML).
Result<std::string> ApplyConfigOverrides(std::string_view yaml_text,
                                         const std::vector<std::string>& overrides);

}  // namespace det::cli
