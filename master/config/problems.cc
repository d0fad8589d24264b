#include "master/config/problems.h"

#include <algorithm>
#include <limits>

namespace det::master::config::internal {

namespace {
constexpr size_t kMaxDescribeChars = 80;
}  // namespace

void Problems::Add(std::string_view path, std::string_view rule) {
  lines_.push_back(std::string(path) + ": " + std::string(rule));
}

void Problems::Add(std::string_view path, std::string_view rule, const nlohmann::json& got) {
  lines_.push_back(std::string(path) + ": " + std::string(rule) + " (got " + Describe(got) + ")");
}

Status Problems::ToStatus() const {
  if (lines_.empty()) return Status::Ok();
  std::string message;
  for (const std::string& line : lines_) {
    if (!message.empty()) message += "\n";
    message += line;
  }
  return InvalidArgument(std::move(message));
}

std::string JoinPath(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return std::string(parent) + "." + std::string(key);
}

std::string Describe(const nlohmann::json& v) {
  std::string text = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > kMaxDescribeChars) text = text.substr(0, kMaxDescribeChars - 3) + "...";
  return text;
}

bool Has(const nlohmann::json& obj, std::string_view key) {
  if (!obj.is_object()) return false;
  auto it = obj.find(key);
  return it != obj.end() && !it->is_null();
}

std::optional<int64_t> ReadInt(const nlohmann::json& obj, std::string_view key,
                               std::string_view path, Problems* problems) {
  if (!Has(obj, key)) return std::nullopt;
  const nlohmann::json& v = obj.at(std::string(key));
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      problems->Add(JoinPath(path, key), "out of range", v);
      return std::nullopt;
    }
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  problems->Add(JoinPath(path, key), "must be an integer", v);
  return std::nullopt;
}

std::optional<double> ReadNumber(const nlohmann::json& obj, std::string_view key,
                                 std::string_view path, Problems* problems) {
  if (!Has(obj, key)) return std::nullopt;
  const nlohmann::json& v = obj.at(std::string(key));
  if (v.is_number()) return v.get<double>();
  problems->Add(JoinPath(path, key), "must be a number", v);
  return std::nullopt;
}

std::optional<bool> ReadBool(const nlohmann::json& obj, std::string_view key,
                             std::string_view path, Problems* problems) {
  if (!Has(obj, key)) return std::nullopt;
  const nlohmann::json& v = obj.at(std::string(key));
  if (v.is_boolean()) return v.get<bool>();
  problems->Add(JoinPath(path, key), "must be a boolean", v);
  return std::nullopt;
}

std::optional<std::string> ReadString(const nlohmann::json& obj, std::string_view key,
                                      std::string_view path, Problems* problems) {
  if (!Has(obj, key)) return std::nullopt;
  const nlohmann::json& v = obj.at(std::string(key));
  if (v.is_string()) return v.get<std::string>();
  problems->Add(JoinPath(path, key), "must be a string", v);
  return std::nullopt;
}

void RejectUnknownKeys(const nlohmann::json& obj, const std::vector<std::string_view>& known,
                       std::string_view path, Problems* problems) {
  if (!obj.is_object()) return;
  for (const auto& [key, value] : obj.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      problems->Add(JoinPath(path, key), "unknown field");
    }
  }
}

}  // namespace det::master::config::internal
