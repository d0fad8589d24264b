#pragma once
// Checkpoint uuids name directories on storage (`<storage>/<uuid>`), so every uuid that arrives
// from a request or a report must be a plain uuid before it is looked up or joined to a path:
// "../x", "/etc" or "a/b" would reach outside the storage.

#include <string_view>

#include "common/status.h"

namespace det::master::core {

// True for 8-4-4-4-12 hexadecimal digits (either case), e.g.
// 0b9c5a0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b.
bool IsUuid(std::string_view s);

// OK for a uuid; else InvalidArgument naming `field`, the value and the rule.
Status CheckCheckpointUuid(std::string_view uuid, std::string_view field = "uuid");

}  // namespace det::master::core
