#pragma once
// How VerifyPassword (passwords.h) keeps its time independent of what is stored: every call runs
// one bcrypt check of cost 10, a blank stored hash and an unknown username (AuthService::Login)
// checking DummyPasswordHash instead, so the answer's time does not tell which usernames exist.

#include <cstdint>
#include <string>

namespace det::master::server {

// A bcrypt hash of BcryptHash's cost, of a random secret nobody knows (made once).
const std::string& DummyPasswordHash();
// How many bcrypt checks VerifyPassword has run in this process (a test seam).
uint64_t PasswordVerifications();

}  // namespace det::master::server
