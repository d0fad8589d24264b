#pragma once
// Secrets kept in files (the agent secret, an agent's own key): read trimmed, written 0600,
// generated from OpenSSL's random source.

#include <string>

#include "common/status.h"

namespace det {

// The file's content without surrounding whitespace; an error names the path and the reason.
Result<std::string> ReadSecretFile(const std::string& path);
// Writes `secret` and a newline to `path` with mode 0600 (replacing it atomically).
Status WriteSecretFile(const std::string& path, const std::string& secret);
// `bytes` random bytes as lower-case hex.
std::string GenerateSecret(int bytes = 32);
// Reads `path`, or generates a secret and writes it there when the file does not exist.
Result<std::string> ReadOrCreateSecretFile(const std::string& path);
// Constant-time comparison (no early exit on the first differing byte).
bool SecretsEqual(const std::string& a, const std::string& b);

}  // namespace det
