#pragma once
// Sealing of a task's private parts at rest (a shell's private key, a notebook's token, the
// environment that carries them): AES-256-GCM with a key kept in the master's data dir
// (task_secrets.key, 0600, created beside the agent secret files on first use), so a read of
// the database alone hands none of them out. The master needs them back (a shell's key for its
// owner, the token for the proxy and a restarted task), so they are encrypted, not hashed.

#include <string>

#include "common/status.h"

namespace det::master::server {

inline constexpr char kTaskSecretsKeyFileName[] = "task_secrets.key";

struct MasterConfig;
// <data_dir>/task_secrets.key ("" without a data dir).
std::string TaskSecretsKeyPath(const MasterConfig& config);

class TaskSecretsBox {
 public:
  // Reads the key file at `path`, or creates it (mode 0600, and its directory) with a fresh
  // random key.
  static Result<TaskSecretsBox> OpenOrCreate(const std::string& path);

  // base64(nonce | ciphertext | tag); a fresh random nonce every time.
  Result<std::string> Seal(const std::string& plaintext) const;
  // The plaintext; an error when `sealed` was not sealed with this key or was altered.
  Result<std::string> Open(const std::string& sealed) const;

 private:
  explicit TaskSecretsBox(std::string key) : key_(std::move(key)) {}
  std::string key_;  // 32 bytes
};

}  // namespace det::master::server
