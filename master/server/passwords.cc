#include "master/server/passwords.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <atomic>
#include <cstring>
#include <stdexcept>

#include "master/server/password_verifications.h"

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

namespace {

std::atomic<uint64_t> verifications{0};

// The stored bcrypt hash `stored` recomputed from `client_hash` (empty on a malformed hash).
std::string Bcrypt(const std::string& client_hash, const std::string& stored) {
  verifications.fetch_add(1, std::memory_order_relaxed);
  std::string input = client_hash.substr(0, 72);
  struct crypt_data data;
  memset(&data, 0, sizeof(data));
  const char* out = crypt_r(input.c_str(), stored.c_str(), &data);
  if (out == nullptr || out[0] == '*') return "";
  return out;
}

}  // namespace

bool VerifyPassword(const std::string& client_hash, const std::optional<std::string>& stored) {
  if (!stored.has_value() || stored->empty()) {
    (void)Bcrypt(client_hash, DummyPasswordHash());
    return client_hash.empty();
  }
  std::string out = Bcrypt(client_hash, *stored);
  return !out.empty() && out.size() == stored->size() &&
         CRYPTO_memcmp(out.data(), stored->data(), out.size()) == 0;
}

const std::string& DummyPasswordHash() {
  static const std::string hash = [] {
    Result<std::string> h = BcryptHash(NewToken());
    // Without a salt source no password can be set either; a fixed cost-10 hash still costs
    // the same to check.
    return h.ok() ? *h : std::string("$2b$10$abcdefghijklmnopqrstuuK5pVq3Nt1sZbVjZ8n9mV3nC2Wb3sJ6e");
  }();
  return hash;
}

uint64_t PasswordVerifications() { return verifications.load(std::memory_order_relaxed); }

std::string NewToken() {
  // Drawn from a per-thread block of the OS generator's bytes: one RAND_bytes call per 128
  // tokens instead of one each (a 20,000-trial search makes 20,000 tokens in one request, and
  // each call took ~3 us, mostly OpenSSL's fork check and locking). A forked child would inherit
  // the unused bytes: the master's children exec at once and never make tokens.
  constexpr size_t kTokenBytes = 32;
  constexpr size_t kBlockBytes = 128 * kTokenBytes;
  thread_local unsigned char block[kBlockBytes];
  thread_local size_t used = kBlockBytes;
  if (used == kBlockBytes) {
    if (RAND_bytes(block, static_cast<int>(kBlockBytes)) != 1) {
      throw std::runtime_error("the system's random generator failed");
    }
    used = 0;
  }
  std::string token = Hex(block + used, kTokenBytes);
  // A token's bytes are not kept once handed out.
  OPENSSL_cleanse(block + used, kTokenBytes);
  used += kTokenBytes;
  return token;
}

bool IsLoopbackAddress(const std::string& address) {
  return address == "localhost" || address == "::1" || address.rfind("127.", 0) == 0;
}

}  // namespace det::master::server
