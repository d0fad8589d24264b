#pragma once
// A small, dependency-free MD5 (RFC 1321). The scheduler needs it only for Determined's
// deterministic tie-break between equally scored agents (fitting.h, rule 3); it is not used for
// anything security related. Kept here instead of OpenSSL so that det_master_scheduler links
// nothing but det_common.

#include <array>
#include <cstdint>
#include <string_view>

namespace det::master::scheduler {

using Md5Digest = std::array<uint8_t, 16>;

// Returns the MD5 digest of `data`.
Md5Digest Md5(std::string_view data);

// The first 8 bytes of Md5(data) read as a little-endian uint64 (Go's
// binary.LittleEndian.Uint64(md5.Sum(data)[:])).
uint64_t Md5Prefix64(std::string_view data);

}  // namespace det::master::scheduler
