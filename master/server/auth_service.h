#pragma once
// AuthService: who is calling. Users and their passwords, login sessions (cached so that
// authenticating a request reads no database row), and the tokens of trial allocations. It has
// its own lock, never held across a store call, so authentication never waits on the runtime
// loop's work or on a slow disk.
//
// A cached session never outlives its row: it ends at the session's expiry, and logout,
// deactivation and every change of a user drop it here at once (no cache window). Failed logins
// are throttled per username and per client address (LoginThrottle). An allocation's token is
// valid only while the allocation runs.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "master/server/login_throttle.h"
#include "master/store/store.h"

namespace det::master::server {

// Who is calling: a user session or a trial's allocation.
struct Principal {
  int64_t user_id = 0;
  std::string username;
  bool admin = false;
  bool is_allocation = false;
  std::string allocation_id;
  int64_t trial_id = 0;
  std::string token;
};

struct AuthOptions {
  // How long a login session lasts (master config security.token_lifetime; Determined's 7 days).
  int64_t session_lifetime_micros = 7ll * 24 * 3600 * 1000000;
  LoginThrottleOptions throttle;
};

class AuthService {
 public:
  AuthService(store::Store* store, const Clock* clock, AuthOptions options = {})
      : store_(store), clock_(clock), options_(options), throttle_(options.throttle) {}

  // Creates the built-in users admin and determined on a fresh store (with
  // `initial_password`'s hash when set), then refuses a non-loopback `bind_address` while either
  // has a blank password.
  Status EnsureBuiltinUsers(const std::optional<std::string>& initial_password,
                            const std::string& bind_address) EXCLUDES(mu_);

  // A new session token for the user, or Unauthenticated("invalid credentials"), or
  // ResourceExhausted naming when to retry after repeated failures for the username or the
  // client address (then *retry_after_seconds is set when given).
  Result<std::pair<std::string, store::UserRow>> Login(const std::string& username,
                                                       const std::string& client_hash,
                                                       const std::string& client_address = "",
                                                       int64_t* retry_after_seconds = nullptr)
      EXCLUDES(mu_);
  Status Logout(const std::string& token) EXCLUDES(mu_);
  // A new session for the user without a password (a task acting as its owner).
  Result<std::string> CreateSession(int64_t user_id);
  Result<Principal> AuthenticateUserToken(const std::string& token) EXCLUDES(mu_);
  Result<Principal> AuthenticateAllocationToken(const std::string& token) EXCLUDES(mu_);
  Result<store::UserRow> GetUser(int64_t id);
  Result<std::vector<store::UserRow>> ListUsers();
  // Admins may set anyone's password, users their own; "" sets a blank password.
  Status SetPassword(const Principal& who, int64_t user_id, const std::string& client_hash);

  // Makes an allocation's token known by its digest (store::AllocationTokenDigest, what the
  // store keeps), so its requests authenticate from memory.
  void RegisterAllocationDigest(const std::string& token_digest, const std::string& allocation_id,
                                int64_t trial_id) EXCLUDES(mu_);
  // The allocation ended: its token is refused from now on (401 naming the allocation).
  void EndAllocationDigest(const std::string& token_digest) EXCLUDES(mu_);

  // Drops the user's cached sessions, so a changed user (deactivated, renamed, ...) is read
  // again from the store on its next request.
  void ForgetUserSessions(int64_t user_id) EXCLUDES(mu_);

 private:
  struct CachedSession {
    Principal principal;
    int64_t expiry;  // micros: re-read from the store after this
  };
  struct AllocationIdentity {
    std::string allocation_id;
    int64_t trial_id = 0;
    bool ended = false;
  };

  store::Store* const store_;
  const Clock* const clock_;
  const AuthOptions options_;
  LoginThrottle throttle_;
  Mutex mu_;
  std::map<std::string, CachedSession> sessions_ GUARDED_BY(mu_);
  // Bumped by every revocation, so a lookup that raced one does not cache what it read.
  uint64_t generation_ GUARDED_BY(mu_) = 0;
  // By token digest: this map holds no token that authenticates.
  // Digest -> allocation; hashed, as digests are random (one lookup per trial request).
  std::unordered_map<std::string, AllocationIdentity> allocation_tokens_ GUARDED_BY(mu_);
};

}  // namespace det::master::server
