#pragma once
// A fresh ed25519 key pair for a shell task, made by OpenSSH's ssh-keygen.

#include <string>

#include "common/status.h"

namespace det::master::server {

struct SshKeyPair {
  std::string private_key;  // OpenSSH PEM text
  std::string public_key;   // one authorized_keys line
};

Result<SshKeyPair> GenerateSshKeyPair(const std::string& comment);

}  // namespace det::master::server
