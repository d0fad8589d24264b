#include "cli/password.h"

#include <openssl/evp.h>

namespace det::cli {

std::string Sha512Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha512(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

std::string HashPasswordForLogin(std::string_view plain) {
  if (plain.empty()) return "";
  std::string salted(kPasswordSalt);
  salted.append(plain);
  return Sha512Hex(salted);
}

}  // namespace det::cli
