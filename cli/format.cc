#include "cli/format.h"

#include <cctype>
#include <cinttypes>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace det::cli {

std::string FormatSize(double bytes) {
  static const char* kUnits[] = {"", "K", "M", "G", "T", "P", "E", "Z"};
  char buf[64];
  for (const char* unit : kUnits) {
    if (std::fabs(bytes) < 1024.0) {
      std::snprintf(buf, sizeof(buf), "%3.1f%sB", bytes, unit);
      return buf;
    }
    bytes /= 1024.0;
  }
  std::snprintf(buf, sizeof(buf), "%.1fYB", bytes);
  return buf;
}

std::optional<int64_t> ParseRfc3339(std::string_view text) {
  std::string s(text);
  int year, mon, day, hour, min, sec;
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d%*1[Tt ]%2d:%2d:%2d%n", &year, &mon, &day, &hour, &min,
                  &sec, &consumed) != 6) {
    return std::nullopt;
  }
  size_t i = static_cast<size_t>(consumed);
  if (i < s.size() && (s[i] == '.' || s[i] == ',')) {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  }
  int64_t offset = 0;
  if (i < s.size()) {
    if (s[i] == 'Z' || s[i] == 'z') {
      ++i;
    } else if (s[i] == '+' || s[i] == '-') {
      int oh = 0, om = 0;
      if (std::sscanf(s.c_str() + i + 1, "%2d:%2d", &oh, &om) < 1 &&
          std::sscanf(s.c_str() + i + 1, "%2d%2d", &oh, &om) < 1) {
        return std::nullopt;
      }
      offset = (s[i] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
      i = s.size();
    }
  }
  struct tm tm = {};
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  return static_cast<int64_t>(timegm(&tm)) - offset;
}

std::optional<std::string> FormatTimeText(std::string_view rfc3339) {
  if (rfc3339.empty()) return std::nullopt;
  std::optional<int64_t> secs = ParseRfc3339(rfc3339);
  if (!secs) return std::string(rfc3339);
  time_t t = static_cast<time_t>(*secs);
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S+0000", &tm);
  return std::string(buf);
}

std::optional<std::string> FormatTime(const nlohmann::json& value) {
  if (!value.is_string()) return std::nullopt;
  return FormatTimeText(value.get_ref<const std::string&>());
}

std::string FormatPercent(const nlohmann::json& value) {
  if (!value.is_number()) return "N/A";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f%%", value.get<double>() * 100.0);
  return buf;
}

std::string StripStatePrefix(std::string_view state) {
  constexpr std::string_view kPrefix = "STATE_";
  if (state.substr(0, kPrefix.size()) == kPrefix) state.remove_prefix(kPrefix.size());
  return std::string(state);
}

std::string FormatFloatG(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%g", value);
  return buf;
}

std::optional<std::string> JsonCell(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded:
      return std::nullopt;
    case nlohmann::json::value_t::string:
      return value.get<std::string>();
    case nlohmann::json::value_t::boolean:
      return value.get<bool>() ? std::string("True") : std::string("False");
    case nlohmann::json::value_t::number_integer:
      return std::to_string(value.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return std::to_string(value.get<uint64_t>());
    case nlohmann::json::value_t::number_float:
      return FormatFloatG(value.get<double>());
    default:
      return value.dump();
  }
}

std::optional<int64_t> JsonInt(const nlohmann::json& value) {
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number()) return static_cast<int64_t>(value.get<double>());
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    char* end = nullptr;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (!s.empty() && end != nullptr && *end == '\0') return static_cast<int64_t>(v);
  }
  return std::nullopt;
}

std::string JsonString(const nlohmann::json& obj, const char* key, std::string fallback) {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

}  // namespace det::cli
