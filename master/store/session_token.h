#pragma once
// Login session tokens are stored as their SHA-256 digest, never as themselves: a copy of the
// database (a backup, a leaked file) holds no token that authenticates a request.

#include <string>

namespace det::master::store {

// Lower-case hex SHA-256 of `token`: the key of its user_sessions row.
std::string SessionTokenDigest(const std::string& token);

// Allocation tokens are kept the same way (allocations.token, generic_tasks.allocation_token):
// AllocationRow::token and GenericTaskRow::allocation_token hold this digest, and the token
// itself lives only in the memory of the master that made it and in the trial's environment.
inline std::string AllocationTokenDigest(const std::string& token) {
  return SessionTokenDigest(token);
}

}  // namespace det::master::store
