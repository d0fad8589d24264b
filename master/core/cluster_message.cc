#include "master/core/cluster_message.h"

#include <cstdio>

#include "common/clock.h"

namespace det::master::core {

using nlohmann::json;

namespace {

size_t Utf8Chars(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xc0) != 0x80) ++n;
  }
  return n;
}

const json* Get(const json& obj, const char* camel, const char* snake) {
  if (obj.contains(camel) && !obj[camel].is_null()) return &obj[camel];
  if (obj.contains(snake) && !obj[snake].is_null()) return &obj[snake];
  return nullptr;
}

Result<int64_t> Time(const json& v, const char* field) {
  if (!v.is_string()) return InvalidArgument(std::string(field) + ": must be an RFC 3339 string");
  std::optional<int64_t> t = ParseRfc3339(v.get<std::string>());
  if (!t) {
    return InvalidArgument(std::string(field) + ": " + v.dump() +
                           " is not RFC 3339 (YYYY-MM-DDThh:mm:ssZ)");
  }
  return *t;
}

}  // namespace

Result<int64_t> ParseMessageDuration(const std::string& text) {
  if (text.empty()) return InvalidArgument("duration: empty");
  int64_t total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start || i == text.size() || i - start > 9) {
      return InvalidArgument("duration: \"" + text +
                             "\" is not a length like 90s, 30m, 22h, 5d, 2w or 1h30m");
    }
    int64_t n = std::stoll(text.substr(start, i - start));
    int64_t unit = 0;
    switch (text[i]) {
      case 's':
        unit = 1;
        break;
      case 'm':
        unit = 60;
        break;
      case 'h':
        unit = 3600;
        break;
      case 'd':
        unit = 86400;
        break;
      case 'w':
        unit = 7 * 86400;
        break;
      default:
        return InvalidArgument("duration: \"" + text + "\": unknown unit '" +
                               std::string(1, text[i]) + "' (s, m, h, d, w)");
    }
    ++i;
    total += n * unit;
    if (total > int64_t{100} * 365 * 86400) {
      return InvalidArgument("duration: \"" + text + "\" is more than 100 years");
    }
  }
  return total * 1'000'000;
}

Result<store::ClusterMessageRow> ParseClusterMessage(const json& body, int64_t now) {
  if (!body.is_object()) return InvalidArgument("body: must be an object");
  store::ClusterMessageRow m;
  const json* message = Get(body, "message", "message");
  if (message == nullptr || !message->is_string() || message->get<std::string>().empty()) {
    return InvalidArgument("message: required, the text to show");
  }
  m.message = message->get<std::string>();
  if (size_t n = Utf8Chars(m.message); n > kMaxClusterMessageChars) {
    return InvalidArgument("message: must be at most " + std::to_string(kMaxClusterMessageChars) +
                           " characters; got " + std::to_string(n));
  }
  m.start_time = now;
  if (const json* start = Get(body, "startTime", "start_time")) {
    DET_ASSIGN_OR_RETURN(m.start_time, Time(*start, "startTime"));
  }
  const json* end = Get(body, "endTime", "end_time");
  const json* duration = Get(body, "duration", "duration");
  if (end != nullptr && duration != nullptr) {
    return InvalidArgument("endTime and duration: give one of them, not both");
  }
  if (end != nullptr) {
    DET_ASSIGN_OR_RETURN(int64_t t, Time(*end, "endTime"));
    m.end_time = t;
  } else if (duration != nullptr) {
    if (!duration->is_string()) return InvalidArgument("duration: must be a string like 22h");
    DET_ASSIGN_OR_RETURN(int64_t d, ParseMessageDuration(duration->get<std::string>()));
    m.end_time = m.start_time + d;
  }
  if (m.end_time && *m.end_time <= m.start_time) {
    return InvalidArgument("endTime: must be after the start time " + ProtoTimestamp(m.start_time));
  }
  if (m.end_time && *m.end_time <= now) {
    return InvalidArgument("endTime: " + ProtoTimestamp(*m.end_time) + " is not in the future");
  }
  m.created_time = now;
  return m;
}

bool ClusterMessageCurrent(const store::ClusterMessageRow& m, int64_t now) {
  return !m.end_time || *m.end_time > now;
}

bool ClusterMessageActive(const store::ClusterMessageRow& m, int64_t now) {
  return m.start_time <= now && ClusterMessageCurrent(m, now);
}

std::string ProtoTimestamp(int64_t micros) {
  std::string s = FormatRfc3339(micros);  // ...:ss.ffffffZ
  int64_t frac = ((micros % 1'000'000) + 1'000'000) % 1'000'000;
  size_t dot = s.find('.');
  if (dot == std::string::npos) return s;
  if (frac == 0) return s.substr(0, dot) + "Z";
  if (frac % 1000 == 0) return s.substr(0, dot + 4) + "Z";
  return s;
}

json ClusterMessageJson(const store::ClusterMessageRow& m) {
  json j = {{"message", m.message},
            {"startTime", ProtoTimestamp(m.start_time)},
            {"createdTime", ProtoTimestamp(m.created_time)}};
  if (m.end_time) j["endTime"] = ProtoTimestamp(*m.end_time);
  return j;
}

}  // namespace det::master::core
