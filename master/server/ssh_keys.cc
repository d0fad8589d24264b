#include "master/server/ssh_keys.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/subprocess.h"

namespace det::master::server {

namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

Result<SshKeyPair> GenerateSshKeyPair(const std::string& comment) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "det-sshkey-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) return Internal("ssh key: cannot create a temp dir");
  std::string key = tmpl + "/id_ed25519";
  Result<ProcessResult> r =
      RunProcess({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", key});
  SshKeyPair pair;
  if (r.ok() && r->exit_code == 0) {
    pair.private_key = ReadAll(key);
    pair.public_key = ReadAll(key + ".pub");
  }
  std::error_code ec;
  std::filesystem::remove_all(tmpl, ec);
  if (!r.ok()) return Unavailable("ssh-keygen (package openssh-client): " + r.status().message());
  if (r->exit_code != 0 || pair.private_key.empty()) {
    return Internal("ssh-keygen failed with exit code " + std::to_string(r->exit_code));
  }
  return pair;
}

}  // namespace det::master::server
