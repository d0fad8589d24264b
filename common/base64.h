#pragma once
// Base64 (RFC 4648, with padding) over OpenSSL's EVP encoder.

#include <string>
#include <string_view>

#include "common/status.h"

namespace det {

std::string Base64Encode(std::string_view data);
Result<std::string> Base64Decode(std::string_view text);

}  // namespace det
