#include "common/secret_file.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace det {

Result<std::string> ReadSecretFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read secret file '" + path + "': " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  size_t begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return std::string();
  size_t end = s.find_last_not_of(" \t\r\n");
  return s.substr(begin, end - begin + 1);
}

Status WriteSecretFile(const std::string& path, const std::string& secret) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Internal("cannot create '" + tmp + "': " + std::strerror(errno));
  std::string data = secret + "\n";
  bool ok = ::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
  ok = ::fsync(fd) == 0 && ok;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return Internal("cannot write secret file '" + path + "': " + std::strerror(errno));
  }
  return Status::Ok();
}

std::string GenerateSecret(int bytes) {
  std::vector<unsigned char> raw(static_cast<size_t>(bytes));
  if (RAND_bytes(raw.data(), bytes) != 1) {
    // No entropy is a broken host; a predictable secret would be worse than stopping.
    throw std::runtime_error("OpenSSL RAND_bytes failed");
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

Result<std::string> ReadOrCreateSecretFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    DET_ASSIGN_OR_RETURN(std::string s, ReadSecretFile(path));
    if (s.empty()) return InvalidArgument("secret file '" + path + "' is empty");
    return s;
  }
  std::string secret = GenerateSecret();
  DET_RETURN_IF_ERROR(WriteSecretFile(path, secret));
  return secret;
}

bool SecretsEqual(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace det
