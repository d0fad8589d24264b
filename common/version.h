#pragma once
// The version every binary reports; the CLI compares it with the master's.

namespace det {
inline constexpr const char* kVersion = "0.38.1";
}  // namespace det
