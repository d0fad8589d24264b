#include "master/server/task_secrets_box.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <filesystem>
#include <memory>

#include "common/base64.h"
#include "common/secret_file.h"
#include "master/server/master_config.h"

namespace det::master::server {

namespace {

constexpr size_t kKeyBytes = 32;
constexpr size_t kNonceBytes = 12;
constexpr size_t kTagBytes = 16;

using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

Result<std::string> HexToBytes(const std::string& hex, const std::string& path) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (hex.size() != 2 * kKeyBytes) {
    return InvalidArgument("task secrets key '" + path + "': must be " +
                           std::to_string(2 * kKeyBytes) + " hex digits (got " +
                           std::to_string(hex.size()) + " characters)");
  }
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) {
      return InvalidArgument("task secrets key '" + path + "': must be hex digits only");
    }
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

const unsigned char* Bytes(const std::string& s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

std::string TaskSecretsKeyPath(const MasterConfig& config) {
  if (config.data_dir.empty()) return "";
  return (std::filesystem::path(config.data_dir) / kTaskSecretsKeyFileName).string();
}

Result<TaskSecretsBox> TaskSecretsBox::OpenOrCreate(const std::string& path) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  if (ec) return Internal("cannot create '" + dir.string() + "': " + ec.message());
  DET_ASSIGN_OR_RETURN(std::string hex, ReadOrCreateSecretFile(path));
  DET_ASSIGN_OR_RETURN(std::string key, HexToBytes(hex, path));
  return TaskSecretsBox(std::move(key));
}

Result<std::string> TaskSecretsBox::Seal(const std::string& plaintext) const {
  std::string nonce(kNonceBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), kNonceBytes) != 1) {
    return Internal("task secrets: no random nonce (OpenSSL RAND_bytes failed)");
  }
  CipherCtx ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  std::string out(plaintext.size() + kTagBytes, '\0');
  int len = 0, tail = 0;
  auto* dst = reinterpret_cast<unsigned char*>(out.data());
  bool ok = ctx != nullptr &&
            EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) == 1 &&
            EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, Bytes(key_), Bytes(nonce)) == 1 &&
            EVP_EncryptUpdate(ctx.get(), dst, &len, Bytes(plaintext),
                              static_cast<int>(plaintext.size())) == 1 &&
            EVP_EncryptFinal_ex(ctx.get(), dst + len, &tail) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes, dst + len + tail) == 1;
  if (!ok) return Internal("task secrets: AES-256-GCM encryption failed");
  out.resize(static_cast<size_t>(len + tail) + kTagBytes);
  return Base64Encode(nonce + out);
}

Result<std::string> TaskSecretsBox::Open(const std::string& sealed) const {
  DET_ASSIGN_OR_RETURN(std::string raw, Base64Decode(sealed));
  if (raw.size() < kNonceBytes + kTagBytes) {
    return InvalidArgument("task secrets: sealed value too short");
  }
  std::string nonce = raw.substr(0, kNonceBytes);
  std::string body = raw.substr(kNonceBytes, raw.size() - kNonceBytes - kTagBytes);
  std::string tag = raw.substr(raw.size() - kTagBytes);
  CipherCtx ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  std::string out(body.size() + 1, '\0');
  int len = 0, tail = 0;
  auto* dst = reinterpret_cast<unsigned char*>(out.data());
  bool ok =
      ctx != nullptr &&
      EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) == 1 &&
      EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, Bytes(key_), Bytes(nonce)) == 1 &&
      EVP_DecryptUpdate(ctx.get(), dst, &len, Bytes(body), static_cast<int>(body.size())) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes,
                          const_cast<char*>(tag.data())) == 1 &&
      EVP_DecryptFinal_ex(ctx.get(), dst + len, &tail) == 1;
  if (!ok) {
    return PermissionDenied(
        "task secrets: the sealed value does not open with this master's key (altered, or "
        "sealed by another data dir's task_secrets.key)");
  }
  out.resize(static_cast<size_t>(len + tail));
  return out;
}

}  // namespace det::master::server
