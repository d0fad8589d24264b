#include "master/server/auth_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "master/server/passwords.h"

namespace det::master::server {
namespace {

constexpr int64_t kSessionLifetimeMicros = 7ll * 24 * 3600 * 1000000;
// A cached session is re-checked against the store at least this often, so a revocation made
// elsewhere (another master, a direct database edit) lands.
constexpr int64_t kSessionCacheMicros = 5ll * 60 * 1000000;

Principal AllocationPrincipal(const std::string& token, const std::string& allocation_id,
                              int64_t trial_id) {
  Principal p;
  p.is_allocation = true;
  p.allocation_id = allocation_id;
  p.trial_id = trial_id;
  p.token = token;
  return p;
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
                                                                  const std::string& client_hash) {
  Result<store::UserRow> user = store_->GetUserByName(username);
  if (!user.ok()) {
    if (user.status().code() == StatusCode::kNotFound)
      return Unauthenticated("invalid credentials");
    return user.status();
  }
  if (!VerifyPassword(client_hash, user->password_hash)) {
    return Unauthenticated("invalid credentials");
  }
  if (!user->active) return PermissionDenied("user " + username + " is not active");
  DET_ASSIGN_OR_RETURN(std::string token, CreateSession(user->id));
  return std::make_pair(token, user.value());
}

Result<std::string> AuthService::CreateSession(int64_t user_id) {
  std::string token = NewToken();
  DET_RETURN_IF_ERROR(
      store_->CreateSession(token, user_id, clock_->NowMicros() + kSessionLifetimeMicros));
  return token;
}

Status AuthService::Logout(const std::string& token) {
  {
    MutexLock lock(&mu_);
    sessions_.erase(token);
  }
  return store_->RevokeSession(token);
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
  // The store is read without the lock: other requests authenticate meanwhile.
  DET_ASSIGN_OR_RETURN(int64_t user_id, store_->LookupSession(token, now));
  DET_ASSIGN_OR_RETURN(store::UserRow user, store_->GetUserById(user_id));
  if (!user.active) return PermissionDenied("user " + user.username + " is not active");
  Principal p;
  p.user_id = user.id;
  p.username = user.username;
  p.admin = user.admin;
  p.token = token;
  MutexLock lock(&mu_);
  sessions_[token] = CachedSession{p, now + std::min(kSessionCacheMicros, kSessionLifetimeMicros)};
  return p;
}

Result<Principal> AuthService::AuthenticateAllocationToken(const std::string& token) {
  {
    MutexLock lock(&mu_);
    auto it = allocation_tokens_.find(token);
    if (it != allocation_tokens_.end()) {
      return AllocationPrincipal(token, it->second.allocation_id, it->second.trial_id);
    }
  }
  // Allocations of an earlier master run that already ended may still flush logs and metrics.
  DET_ASSIGN_OR_RETURN(store::AllocationRow row, store_->GetAllocationByToken(token));
  RegisterAllocationToken(token, row.allocation_id, row.trial_id);
  return AllocationPrincipal(token, row.allocation_id, row.trial_id);
}

void AuthService::RegisterAllocationToken(const std::string& token,
                                          const std::string& allocation_id, int64_t trial_id) {
  MutexLock lock(&mu_);
  allocation_tokens_[token] = AllocationIdentity{allocation_id, trial_id};
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
  std::erase_if(sessions_,
                [user_id](const auto& kv) { return kv.second.principal.user_id == user_id; });
}

}  // namespace det::master::server
