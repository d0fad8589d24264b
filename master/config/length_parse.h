#pragma once
// Length values: `max_length`, `min_validation_period`, ... Either an integer (unitless; only
// where `allow_unitless`) or an object with exactly one of `batches`, `records`, `epochs`.

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "master/config/experiment_config.h"
#include "master/config/problems.h"

namespace det::master::config::internal {

std::optional<Length> ParseLength(const nlohmann::json& value, std::string_view path,
                                  bool allow_unitless, Problems* problems);

// The JSON form: `{"<unit>": value}`, or the bare integer for kUnitless.
nlohmann::json LengthToJson(const Length& length);

const char* LengthUnitName(Length::Unit unit);

}  // namespace det::master::config::internal
