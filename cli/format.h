#pragma once
// Formatting helpers that reproduce how Determined's CLI renders values: sizes (`1.2KB`),
// times (`2024-01-02 03:04:05+0000`), percentages (`42.0%`), enum states (`STATE_` dropped)
// and JSON values as table cells (Python's `str()` of the value: `True`, `0.5`, ...).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace det::cli {

// `%3.1f` plus a unit B/KB/MB/GB/TB... dividing by 1024, as Determined's `sizeof_fmt`.
std::string FormatSize(double bytes);

// An RFC 3339 timestamp as `%Y-%m-%d %H:%M:%S+0000` in UTC; nullopt for null/empty input and
// the input unchanged if it cannot be parsed.
std::optional<std::string> FormatTime(const nlohmann::json& value);
std::optional<std::string> FormatTimeText(std::string_view rfc3339);

// Parses an RFC 3339 timestamp to seconds since the epoch (UTC).
std::optional<int64_t> ParseRfc3339(std::string_view text);

// A 0..1 fraction as `xx.x%`; `N/A` when null.
std::string FormatPercent(const nlohmann::json& value);

// `STATE_ACTIVE` -> `ACTIVE`.
std::string StripStatePrefix(std::string_view state);

// A JSON value as a table cell: nullopt for null, strings verbatim, booleans `True`/`False`,
// integers in decimal, floats like Python's `format(x, "g")`, objects/arrays as JSON text.
std::optional<std::string> JsonCell(const nlohmann::json& value);

// Python's `format(x, "g")`.
std::string FormatFloatG(double value);

// A JSON value that should hold an integer id (a number or a numeric string).
std::optional<int64_t> JsonInt(const nlohmann::json& value);

// The string value of `obj[key]`, or `fallback` when missing or not a string.
std::string JsonString(const nlohmann::json& obj, const char* key, std::string fallback = "");

}  // namespace det::cli
