#pragma once
// AgentCredentialService: who may speak for an agent id on the agent routes
// (/agents/{id}/register, /commands, /events).
//
// With a cluster agent secret configured (security.agent_token[_file]) every agent request
// carries the secret (header X-Det-Agent-Secret) and the agent's own key (X-Det-Agent-Key, a
// random value the agent keeps in its data dir). The first registration of an id binds it to
// the key's SHA-256 digest in the store; from then on only that key registers, polls or posts
// events as the id, so one agent holding the cluster secret cannot take over another's id,
// read its commands (which carry allocation tokens) or report its exits. Without a secret the
// agent routes are open, as before (loopback clusters); the master warns at startup.
//
// Own mutex; never calls the Master.

#include <map>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "master/store/store.h"

namespace det::master::server {

inline constexpr char kAgentSecretHeader[] = "x-det-agent-secret";  // lower-case, as parsed
inline constexpr char kAgentKeyHeader[] = "x-det-agent-key";

class AgentCredentialService {
 public:
  AgentCredentialService(store::Store* store, const Clock* clock, std::string cluster_secret);

  bool enabled() const { return !secret_.empty(); }

  // Checks one agent request. `registering`: an unbound id gets bound to `key`. Unauthenticated
  // (401) for a missing or wrong secret or key; PermissionDenied (403) when the id is bound to
  // another key, or (not registering) not bound at all.
  Status Authenticate(const std::string& agent_id, const std::string& secret,
                      const std::string& key, bool registering) EXCLUDES(mu_);

  // SHA-256 of `key`, lower-case hex.
  static std::string Digest(const std::string& key);

 private:
  store::Store* store_;
  const Clock* clock_;
  const std::string secret_;
  Mutex mu_;
  std::map<std::string, std::string> bound_ GUARDED_BY(mu_);  // agent id -> key digest (cache)
};

}  // namespace det::master::server
