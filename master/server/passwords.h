#pragma once
// Password and token helpers. Clients send sha512_hex(salt + password) ("client hash"); the
// store keeps bcrypt of that, so the plain password never reaches the master's disk.

#include <optional>
#include <string>

#include "common/status.h"

namespace det::master::server {

// sha512_hex("GubPEmmotfiK9TMD6Zdw" + password); the empty password stays "".
std::string ClientPasswordHash(const std::string& password);
// bcrypt ($2b$, cost 10) of a client hash.
Result<std::string> BcryptHash(const std::string& client_hash);
// Whether `client_hash` matches the stored hash; a blank (nullopt) hash matches only "".
bool VerifyPassword(const std::string& client_hash, const std::optional<std::string>& stored);
// 32 random bytes from the OS, hex encoded.
std::string NewToken();
// Whether `address` is a loopback address (127.0.0.0/8, ::1, localhost).
bool IsLoopbackAddress(const std::string& address);

}  // namespace det::master::server
