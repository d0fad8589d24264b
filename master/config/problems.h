#pragma once
// Problems: collects every validation problem found in one pass over a config, each as a line
// "<field.path>: <rule>" or "<field.path>: <rule> (got <value>)". Also the typed field readers
// the config parsers share. Internal to master/config.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace det::master::config::internal {

class Problems {
 public:
  void Add(std::string_view path, std::string_view rule);
  void Add(std::string_view path, std::string_view rule, const nlohmann::json& got);

  bool empty() const { return lines_.empty(); }
  const std::vector<std::string>& lines() const { return lines_; }
  // kInvalidArgument with every line joined by "\n"; OK when there are none.
  Status ToStatus() const;

 private:
  std::vector<std::string> lines_;
};

// "a.b" from ("a", "b"); just "b" when `parent` is empty.
std::string JoinPath(std::string_view parent, std::string_view key);

// Compact JSON text of `v`, shortened when long, for "(got ...)".
std::string Describe(const nlohmann::json& v);

// Present and not null.
bool Has(const nlohmann::json& obj, std::string_view key);

// Typed readers over `obj[key]`. Absent or null yields nullopt with no problem; a value of the
// wrong type yields nullopt and records "<path>.<key>: must be ... (got ...)".
std::optional<int64_t> ReadInt(const nlohmann::json& obj, std::string_view key,
                               std::string_view path, Problems* problems);
std::optional<double> ReadNumber(const nlohmann::json& obj, std::string_view key,
                                 std::string_view path, Problems* problems);
std::optional<bool> ReadBool(const nlohmann::json& obj, std::string_view key,
                             std::string_view path, Problems* problems);
std::optional<std::string> ReadString(const nlohmann::json& obj, std::string_view key,
                                      std::string_view path, Problems* problems);

// Records "<path>.<key>: unknown field" for each key of `obj` not in `known`.
void RejectUnknownKeys(const nlohmann::json& obj, const std::vector<std::string_view>& known,
                       std::string_view path, Problems* problems);

}  // namespace det::master::config::internal
