#include "master/server/master.h"

#include <spdlog/spdlog.h>

#include "master/server/checkpoint_gc_runner.h"
#include "master/server/master_runtime.h"
#include "master/server/passwords.h"
#include "master/server/template_service.h"
#include "master/server/user_admin_service.h"
#include "master/server/workspace_service.h"

namespace det::master::server {

using nlohmann::json;

namespace {
constexpr int64_t kSessionLifetimeMicros = 7ll * 24 * 3600 * 1000000;
constexpr int64_t kTickMillis = 500;
constexpr int64_t kSessionCacheMicros = 5ll * 60 * 1000000;
}  // namespace

Master::Master(MasterConfig config, std::unique_ptr<store::Store> store, const Clock* clock)
    : config_(std::move(config)),
      store_(std::move(store)),
      clock_(clock),
      waiters_(std::make_unique<Waiters>()),
      profiler_(std::make_unique<ProfilerService>(store_.get(), clock_)),
      unmanaged_(std::make_unique<UnmanagedService>(store_.get(), clock_, &config_)) {
  workspaces_ = std::make_unique<WorkspaceService>(store_.get());
  templates_ = std::make_unique<TemplateService>(
      store_.get(), [this](int64_t id) { return workspaces_->WorkspaceExists(id); });
  // A changed user (deactivated, renamed, ...) is looked up again on its next request.
  user_admin_ = std::make_unique<UserAdminService>(store_.get(), [this](int64_t user_id) {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    std::erase_if(sessions_, [user_id](const auto& kv) {
      return kv.second.principal.user_id == user_id;
    });
  });
  WorkspaceLookup lookup;
  lookup.by_id = [this](int64_t id) -> Result<WorkspaceRef> {
    DET_ASSIGN_OR_RETURN(store::WorkspaceRow row, workspaces_->GetWorkspace(id));
    return WorkspaceRef{row.id, row.name};
  };
  lookup.by_name = [this](const std::string& name) -> Result<WorkspaceRef> {
    DET_ASSIGN_OR_RETURN(std::vector<store::WorkspaceRow> rows, workspaces_->ListWorkspaces());
    for (const store::WorkspaceRow& row : rows) {
      if (row.name == name) return WorkspaceRef{row.id, row.name};
    }
    return NotFound("workspace \"" + name + "\" not found");
  };
  models_ = std::make_unique<ModelService>(store_.get(), clock, std::move(lookup));
}

Master::~Master() { Stop(); }

Status Master::Start() {
  DET_ASSIGN_OR_RETURN(cluster_id_, store_->GetOrCreateClusterId(NewToken().substr(0, 32)));
  master_id_ = NewToken().substr(0, 16);
  std::optional<std::string> initial_hash;
  if (config_.initial_user_password && !config_.initial_user_password->empty()) {
    DET_ASSIGN_OR_RETURN(std::string h,
                         BcryptHash(ClientPasswordHash(*config_.initial_user_password)));
    initial_hash = h;
  }
  DET_ASSIGN_OR_RETURN(bool fresh, store_->EnsureBuiltinUsers(initial_hash));
  if (fresh) spdlog::info("created built-in users admin and determined");
  if (!IsLoopbackAddress(config_.bind_address)) {
    for (const char* name : {"admin", "determined"}) {
      DET_ASSIGN_OR_RETURN(store::UserRow u, store_->GetUserByName(name));
      if (!u.password_hash.has_value() || u.password_hash->empty()) {
        return FailedPrecondition(
            std::string("refusing to listen on non-loopback address ") + config_.bind_address +
            ": built-in user '" + name +
            "' has a blank password; set security.initial_user_password or change it first");
      }
    }
  }
  gc_ = std::make_unique<CheckpointGcRunner>(store_.get(), clock_, config_.python,
                                             config_.harness_dir);
  gc_->Start();
  {
    std::lock_guard<std::mutex> lock(mu_);
    DET_RETURN_IF_ERROR(RestoreLocked());
  }
  ticker_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      cv_.wait_for(lock, std::chrono::milliseconds(kTickMillis));
      if (stopping_) break;
      TickLocked();
    }
  });
  return Status::Ok();
}

void Master::BeginShutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    draining_ = true;
  }
  waiters_->ExpireAll();
}

void Master::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  // Answers the long polls still open; their callbacks take mu_, so it must not be held here.
  waiters_->Stop();
  if (ticker_.joinable()) ticker_.join();
  if (gc_) gc_->Stop();
}

void Master::LongPollLocked(const std::string& key, Waiters::TimePoint deadline, PollStep step,
                            bool final) {
  final = final || draining_ || stopping_ || std::chrono::steady_clock::now() >= deadline;
  if ((*step)(final)) return;
  waiters_->Add(key, deadline, [this, key, deadline, step](bool timed_out) {
    std::lock_guard<std::mutex> lock(mu_);
    LongPollLocked(key, deadline, step, timed_out);
  });
}

void Master::NotifyTrialLocked(int64_t trial_id) {
  waiters_->Notify("trial:" + std::to_string(trial_id));
  waiters_->Notify("logs:" + std::to_string(trial_id));
}

void Master::NotifyAllocationLocked(const std::string& allocation_id) {
  waiters_->Notify("alloc:" + allocation_id);
}

void Master::NotifyAgentLocked(const std::string& agent_id) {
  waiters_->Notify("agent:" + agent_id);
}

Result<std::pair<std::string, store::UserRow>> Master::Login(const std::string& username,
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
  std::string token = NewToken();
  DET_RETURN_IF_ERROR(store_->CreateSession(token, user->id, Now() + kSessionLifetimeMicros));
  return std::make_pair(token, user.value());
}

Status Master::Logout(const std::string& token) {
  {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    sessions_.erase(token);
  }
  return store_->RevokeSession(token);
}

Result<Principal> Master::AuthenticateUserToken(const std::string& token) {
  int64_t now = Now();
  {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    auto it = sessions_.find(token);
    if (it != sessions_.end()) {
      if (it->second.expiry > now) return it->second.principal;
      sessions_.erase(it);
    }
  }
  DET_ASSIGN_OR_RETURN(int64_t user_id, store_->LookupSession(token, now));
  DET_ASSIGN_OR_RETURN(store::UserRow user, store_->GetUserById(user_id));
  if (!user.active) return PermissionDenied("user " + user.username + " is not active");
  Principal p;
  p.user_id = user.id;
  p.username = user.username;
  p.admin = user.admin;
  p.token = token;
  std::lock_guard<std::mutex> lock(sessions_mu_);
  // Re-checked against the store at least every few minutes, so a revocation elsewhere lands.
  sessions_[token] =
      CachedSession{p, std::min(now + kSessionCacheMicros, now + kSessionLifetimeMicros)};
  return p;
}

Result<Principal> Master::AuthenticateAllocationToken(const std::string& token) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, alloc] : allocations_) {
      if (alloc->token == token) {
        Principal p;
        p.is_allocation = true;
        p.allocation_id = id;
        p.trial_id = alloc->trial_id;
        p.token = token;
        return p;
      }
    }
  }
  // Allocations that already ended may still flush logs and metrics.
  DET_ASSIGN_OR_RETURN(store::AllocationRow row, store_->GetAllocationByToken(token));
  Principal p;
  p.is_allocation = true;
  p.allocation_id = row.allocation_id;
  p.trial_id = row.trial_id;
  p.token = token;
  return p;
}

Result<store::UserRow> Master::GetUser(int64_t id) { return store_->GetUserById(id); }

Status Master::SetPassword(const Principal& who, int64_t user_id, const std::string& client_hash) {
  if (!who.admin && who.user_id != user_id) {
    return PermissionDenied("only admins may change another user's password");
  }
  if (client_hash.empty()) return store_->SetUserPassword(user_id, std::nullopt);
  DET_ASSIGN_OR_RETURN(std::string hash, BcryptHash(client_hash));
  return store_->SetUserPassword(user_id, hash);
}

void Master::WaitForTrialLogs(int64_t trial_id, int64_t timeout_ms) {
  // A stream already holds its own thread, so it may block; it still wakes only for its trial.
  struct Signal {
    std::mutex mu;
    std::condition_variable cv;
    bool fired = false;
  };
  auto signal = std::make_shared<Signal>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;  // the registry takes no more waiters
    waiters_->Add("logs:" + std::to_string(trial_id),
                  std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms),
                  [signal](bool) {
                    std::lock_guard<std::mutex> lock(signal->mu);
                    signal->fired = true;
                    signal->cv.notify_all();
                  });
  }
  std::unique_lock<std::mutex> lock(signal->mu);
  signal->cv.wait(lock, [&] { return signal->fired; });
}

}  // namespace det::master::server
