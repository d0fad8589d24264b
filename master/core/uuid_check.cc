#include "master/core/uuid_check.h"

#include <cctype>
#include <string>

namespace det::master::core {

bool IsUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

Status CheckCheckpointUuid(std::string_view uuid, std::string_view field) {
  if (IsUuid(uuid)) return Status::Ok();
  std::string shown(uuid.substr(0, 80));
  if (uuid.size() > 80) shown += "...";
  return InvalidArgument(std::string(field) + ": must be a checkpoint uuid (8-4-4-4-12 " +
                         "hexadecimal digits) (got \"" + shown + "\")");
}

}  // namespace det::master::core
