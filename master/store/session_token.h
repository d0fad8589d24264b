#pragma once
// Login session tokens are stored as their SHA-256 digest, never as themselves: a copy of the
// database (a backup, a leaked file) holds no token that authenticates a request.

#include <string>

namespace det::master::store {

// Lower-case hex SHA-256 of `token`: the key of its user_sessions row.
std::string SessionTokenDigest(const std::string& token);

}  // namespace det::master::store
