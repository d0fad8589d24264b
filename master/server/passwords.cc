#include "master/server/passwords.h"

#include <crypt.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <cstring>

namespace det::master::server {
namespace {

constexpr char kSalt[] = "GubPEmmotfiK9TMD6Zdw";

std::string Hex(const unsigned char* data, size_t n) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kHex[data[i] >> 4]);
    out.push_back(kHex[data[i] & 15]);
  }
  return out;
}

}  // namespace

std::string ClientPasswordHash(const std::string& password) {
  if (password.empty()) return "";
  std::string salted = std::string(kSalt) + password;
  unsigned char digest[SHA512_DIGEST_LENGTH];
  SHA512(reinterpret_cast<const unsigned char*>(salted.data()), salted.size(), digest);
  return Hex(digest, sizeof(digest));
}

Result<std::string> BcryptHash(const std::string& client_hash) {
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  if (crypt_gensalt_rn("$2b$", 10, nullptr, 0, setting, sizeof(setting)) == nullptr) {
    return Internal("cannot generate bcrypt salt");
  }
  // bcrypt reads at most 72 bytes.
  std::string input = client_hash.substr(0, 72);
  struct crypt_data data;
  memset(&data, 0, sizeof(data));
  const char* out = crypt_r(input.c_str(), setting, &data);
  if (out == nullptr || out[0] == '*') return Internal("bcrypt failed");
  return std::string(out);
}

bool VerifyPassword(const std::string& client_hash, const std::optional<std::string>& stored) {
  if (!stored.has_value() || stored->empty()) return client_hash.empty();
  std::string input = client_hash.substr(0, 72);
  struct crypt_data data;
  memset(&data, 0, sizeof(data));
  const char* out = crypt_r(input.c_str(), stored->c_str(), &data);
  if (out == nullptr || out[0] == '*') return false;
  return *stored == out;
}

std::string NewToken() {
  unsigned char buf[32];
  RAND_bytes(buf, sizeof(buf));
  return Hex(buf, sizeof(buf));
}

bool IsLoopbackAddress(const std::string& address) {
  return address == "localhost" || address == "::1" || address.rfind("127.", 0) == 0;
}

}  // namespace det::master::server
