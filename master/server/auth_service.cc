#include "master/server/auth_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "master/server/password_verifications.h"
#include "master/server/passwords.h"
#include "master/store/session_token.h"

namespace det::master::server {
namespace {

// A cached session is re-checked against the store at least this often, so a revocation made
// outside this process (a direct database edit) lands too; revocations through this master
// drop the cached entry at once.
constexpr int64_t kSessionCacheMicros = 60ll * 1000000;
constexpr int64_t kMicrosPerSecond = 1000000;

Principal AllocationPrincipal(const std::string& token, const std::string& allocation_id,
                              int64_t trial_id) {
  Principal p;
  p.is_allocation = true;
  p.allocation_id = allocation_id;
  p.trial_id = trial_id;
  p.token = token;
  return p;
}

Status EndedAllocation(const std::string& allocation_id) {
  return Unauthenticated("allocation " + allocation_id +
                         " has ended; its allocation token is no longer valid");
}

}  // namespace

Status AuthService::EnsureBuiltinUsers(const std::optional<std::string>& initial_password,
                                       const std::string& bind_address) {
  std::optional<std::string> initial_hash;
  if (initial_password && !initial_password->empty()) {
    DET_ASSIGN_OR_RETURN(std::string h, BcryptHash(ClientPasswordHash(*initial_password)));
    initial_hash = h;
  }
  DET_ASSIGN_OR_RETURN(bool fresh, store_->EnsureBuiltinUsers(initial_hash));
  if (fresh) spdlog::info("created built-in users admin and determined");
  if (IsLoopbackAddress(bind_address)) return Status::Ok();
  for (const char* name : {"admin", "determined"}) {
    DET_ASSIGN_OR_RETURN(store::UserRow u, store_->GetUserByName(name));
    if (!u.password_hash.has_value() || u.password_hash->empty()) {
      return FailedPrecondition(
          std::string("refusing to listen on non-loopback address ") + bind_address +
          ": built-in user '" + name +
          "' has a blank password; set security.initial_user_password or change it first");
    }
  }
  return Status::Ok();
}

Result<std::pair<std::string, store::UserRow>> AuthService::Login(const std::string& username,
                                                                  const std::string& client_hash,
                                                                  const std::string& client_address,
                                                                  int64_t* retry_after_seconds) {
  const int64_t now = clock_->NowMicros();
  // Keyed by the user together with the address: failures from one address never lock the user
  // out of another.
  const std::string user_key = "user:" + username + "\naddress:" + client_address;
  const std::string address_key = "address:" + client_address;
  int64_t wait = throttle_.RetryAfter(user_key, now);
  std::string throttled = "user '" + username + "'" +
                          (client_address.empty() ? "" : " from client address " + client_address);
  if (!client_address.empty()) {
    int64_t by_address = throttle_.RetryAfter(address_key, now);
    if (by_address > wait) {
      wait = by_address;
      throttled = "client address " + client_address;
    }
  }
  if (wait > 0) {
    int64_t seconds = (wait + kMicrosPerSecond - 1) / kMicrosPerSecond;
    if (retry_after_seconds != nullptr) *retry_after_seconds = seconds;
    return ResourceExhausted("too many failed logins for " + throttled + "; retry in " +
                             std::to_string(seconds) + " s");
  }
  auto fail = [&]() -> Status {
    throttle_.RecordFailure(user_key, now);
    if (!client_address.empty()) throttle_.RecordFailure(address_key, now);
    return Unauthenticated("invalid credentials");
  };
  Result<store::UserRow> user = store_->GetUserByName(username);
  if (!user.ok()) {
    if (user.status().code() != StatusCode::kNotFound) return user.status();
    // The same bcrypt work as for a known user, so the answer's time does not tell which
    // usernames exist.
    (void)VerifyPassword(client_hash, DummyPasswordHash());
    return fail();
  }
  if (!VerifyPassword(client_hash, user->password_hash)) return fail();
  // The address's count stays: a guesser cannot reset it by logging in to an account of its own.
  throttle_.RecordSuccess(user_key);
  if (!user->active) return PermissionDenied("user " + username + " is not active");
  DET_ASSIGN_OR_RETURN(std::string token, CreateSession(user->id));
  return std::make_pair(token, user.value());
}

Result<std::string> AuthService::CreateSession(int64_t user_id) {
  std::string token = NewToken();
  DET_RETURN_IF_ERROR(store_->CreateSession(
      token, user_id, clock_->NowMicros() + options_.session_lifetime_micros));
  return token;
}

Status AuthService::Logout(const std::string& token) {
  // Revoked in the store first, then forgotten here: a request racing the logout can only
  // re-cache the session before the row is revoked, and the erase below drops that too.
  Status st = store_->RevokeSession(token);
  MutexLock lock(&mu_);
  sessions_.erase(token);
  ++generation_;
  return st;
}

Result<Principal> AuthService::AuthenticateUserToken(const std::string& token) {
  int64_t now = clock_->NowMicros();
  {
    MutexLock lock(&mu_);
    auto it = sessions_.find(token);
    if (it != sessions_.end()) {
      if (it->second.expiry > now) return it->second.principal;
      sessions_.erase(it);
    }
  }
  uint64_t generation;
  {
    MutexLock lock(&mu_);
    generation = generation_;
  }
  // The store is read without the lock: other requests authenticate meanwhile.
  auto session = store_->LookupSessionExpiry(token, now);
  if (!session.ok()) return session.status();
  auto [user_id, session_expiry] = *session;
  DET_ASSIGN_OR_RETURN(store::UserRow user, store_->GetUserById(user_id));
  if (!user.active) return PermissionDenied("user " + user.username + " is not active");
  Principal p;
  p.user_id = user.id;
  p.username = user.username;
  p.admin = user.admin;
  p.token = token;
  MutexLock lock(&mu_);
  // A logout or user change that ran during the reads may have made them stale: cache nothing.
  if (generation == generation_) {
    sessions_[token] = CachedSession{p, std::min(now + kSessionCacheMicros, session_expiry)};
  }
  return p;
}

Result<Principal> AuthService::AuthenticateAllocationToken(const std::string& token) {
  const std::string digest = store::AllocationTokenDigest(token);
  {
    MutexLock lock(&mu_);
    auto it = allocation_tokens_.find(digest);
    if (it != allocation_tokens_.end()) {
      if (it->second.ended) return EndedAllocation(it->second.allocation_id);
      return AllocationPrincipal(token, it->second.allocation_id, it->second.trial_id);
    }
  }
  Result<store::AllocationRow> row = store_->GetAllocationByToken(token);
  if (!row.ok()) {
    if (row.status().code() == StatusCode::kNotFound) return Unauthenticated("invalid credentials");
    return row.status();
  }
  if (row->end_time.has_value()) return EndedAllocation(row->allocation_id);
  // An open allocation of an earlier master run, not yet re-adopted.
  RegisterAllocationDigest(digest, row->allocation_id, row->trial_id);
  return AllocationPrincipal(token, row->allocation_id, row->trial_id);
}

void AuthService::EndAllocationDigest(const std::string& token_digest) {
  MutexLock lock(&mu_);
  auto it = allocation_tokens_.find(token_digest);
  if (it != allocation_tokens_.end()) it->second.ended = true;
}

void AuthService::RegisterAllocationDigest(const std::string& token_digest,
                                           const std::string& allocation_id, int64_t trial_id) {
  MutexLock lock(&mu_);
  allocation_tokens_[token_digest] = AllocationIdentity{allocation_id, trial_id};
}

Result<store::UserRow> AuthService::GetUser(int64_t id) { return store_->GetUserById(id); }

Result<std::vector<store::UserRow>> AuthService::ListUsers() { return store_->ListUsers(); }

Status AuthService::SetPassword(const Principal& who, int64_t user_id,
                                const std::string& client_hash) {
  if (!who.admin && who.user_id != user_id) {
    return PermissionDenied("only admins may change another user's password");
  }
  if (client_hash.empty()) return store_->SetUserPassword(user_id, std::nullopt);
  DET_ASSIGN_OR_RETURN(std::string hash, BcryptHash(client_hash));
  return store_->SetUserPassword(user_id, hash);
}

void AuthService::ForgetUserSessions(int64_t user_id) {
  MutexLock lock(&mu_);
  ++generation_;
  std::erase_if(sessions_,
                [user_id](const auto& kv) { return kv.second.principal.user_id == user_id; });
}

}  // namespace det::master::server
