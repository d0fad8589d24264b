#include "master/server/agent_credential_service.h"

#include <openssl/sha.h>

#include "common/secret_file.h"

namespace det::master::server {

AgentCredentialService::AgentCredentialService(store::Store* store, const Clock* clock,
                                               std::string cluster_secret)
    : store_(store), clock_(clock), secret_(std::move(cluster_secret)) {}

std::string AgentCredentialService::Digest(const std::string& key) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), md);
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : md) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

Status AgentCredentialService::Authenticate(const std::string& agent_id, const std::string& secret,
                                            const std::string& key, bool registering) {
  if (!enabled()) return Status::Ok();
  const std::string who = "agent '" + agent_id + "'";
  if (secret.empty()) {
    return Unauthenticated(who +
                           ": the master requires the cluster agent secret (header "
                           "X-Det-Agent-Secret; start the agent with --agent-token-file)");
  }
  if (!SecretsEqual(secret, secret_)) {
    return Unauthenticated(who +
                           ": wrong agent secret (X-Det-Agent-Secret does not match the "
                           "master's security.agent_token)");
  }
  if (key.empty()) {
    return Unauthenticated(who + ": missing the agent's own key (header X-Det-Agent-Key)");
  }
  std::string digest = Digest(key);
  MutexLock lock(&mu_);
  auto it = bound_.find(agent_id);
  if (it == bound_.end()) {
    Result<std::string> stored = store_->GetAgentCredential(agent_id);
    if (stored.ok()) {
      it = bound_.emplace(agent_id, *stored).first;
    } else if (stored.status().code() != StatusCode::kNotFound) {
      return stored.status();
    } else if (!registering) {
      return PermissionDenied(who + " has not registered; register before polling or posting");
    } else {
      DET_ASSIGN_OR_RETURN(std::string bound, store_->BindAgentCredential(
                                                  agent_id, digest, clock_->NowMicros() / 1000000));
      it = bound_.emplace(agent_id, bound).first;
    }
  }
  if (!SecretsEqual(it->second, digest)) {
    return PermissionDenied(who +
                            " is bound to another agent's credential; an agent id can be used "
                            "only with the key that first registered it");
  }
  return Status::Ok();
}

}  // namespace det::master::server
