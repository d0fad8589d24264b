#include "master/server/user_admin_service.h"

#include <cctype>

#include "master/server/passwords.h"

namespace det::master::server {

namespace {

// The stored hash of a password given plain or as a client hash; "" is the blank password.
Result<std::optional<std::string>> StoredHash(const std::string& password, bool is_hashed) {
  std::string client = is_hashed ? password : ClientPasswordHash(password);
  if (client.empty()) return std::optional<std::string>();
  DET_ASSIGN_OR_RETURN(std::string hash, BcryptHash(client));
  return std::optional<std::string>(hash);
}

}  // namespace

Status CheckUsername(const std::string& username) {
  if (username.empty()) return InvalidArgument("username: must not be empty");
  if (username.size() > 128) {
    return InvalidArgument("username: at most 128 characters (got " +
                           std::to_string(username.size()) + ")");
  }
  for (unsigned char c : username) {
    if (std::isspace(c) || std::iscntrl(c)) {
      return InvalidArgument("username: must not contain whitespace (got '" + username + "')");
    }
  }
  return Status::Ok();
}

Status CheckWebSettings(const std::vector<store::UserWebSettingRow>& rows) {
  constexpr size_t kMaxPerRequest = 1000, kMaxName = 256, kMaxValue = 256 * 1024;
  if (rows.size() > kMaxPerRequest) {
    return InvalidArgument("settings: at most " + std::to_string(kMaxPerRequest) +
                           " per request (got " + std::to_string(rows.size()) + ")");
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string where = "settings[" + std::to_string(i) + "]";
    const store::UserWebSettingRow& r = rows[i];
    if (r.key.empty()) return InvalidArgument(where + ".key: required");
    if (r.key.size() > kMaxName || r.storage_path.size() > kMaxName) {
      return InvalidArgument(where + ": key and storagePath are at most " +
                             std::to_string(kMaxName) + " bytes");
    }
    if (r.value.size() > kMaxValue) {
      return InvalidArgument(where + ".value: at most " + std::to_string(kMaxValue) +
                             " bytes (got " + std::to_string(r.value.size()) + ")");
    }
  }
  return Status::Ok();
}

UserAdminService::UserAdminService(store::Store* store, std::function<void(int64_t)> on_change)
    : store_(store), on_change_(std::move(on_change)) {}

Result<store::UserRow> UserAdminService::Create(const Actor& actor, const UserCreate& req) {
  if (!actor.admin) return PermissionDenied("only admins may create users");
  DET_RETURN_IF_ERROR(CheckUsername(req.username));
  store::UserRow row;
  row.username = req.username;
  row.admin = req.admin;
  row.active = req.active;
  row.display_name = req.display_name;
  if (req.password) {
    DET_ASSIGN_OR_RETURN(row.password_hash, StoredHash(*req.password, req.password_is_hashed));
  }
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(row.id, store_->InsertUser(row));
  return row;
}

Result<store::UserRow> UserAdminService::Patch(const Actor& actor, int64_t user_id,
                                               const UserPatch& req) {
  bool self = actor.user_id == user_id;
  if (!actor.admin) {
    if (req.username) return PermissionDenied("only admins may rename users");
    if (req.admin) return PermissionDenied("only admins may grant or revoke admin");
    if (req.active) return PermissionDenied("only admins may activate or deactivate users");
    if (!self) return PermissionDenied("only admins may change another user");
  }
  if (req.username) DET_RETURN_IF_ERROR(CheckUsername(*req.username));
  if (self && req.active && !*req.active) {
    return InvalidArgument("active: a user cannot deactivate themselves");
  }
  if (self && req.admin && !*req.admin) {
    return InvalidArgument("admin: a user cannot revoke their own admin rights");
  }
  std::optional<std::optional<std::string>> hash;
  if (req.password) {
    DET_ASSIGN_OR_RETURN(std::optional<std::string> h,
                         StoredHash(*req.password, req.password_is_hashed));
    hash = h;
  }
  store::UserRow row;
  {
    std::lock_guard<std::mutex> lock(mu_);
    DET_ASSIGN_OR_RETURN(row, store_->GetUserById(user_id));
    if (req.username) row.username = *req.username;
    if (req.display_name) row.display_name = *req.display_name;
    if (req.admin) row.admin = *req.admin;
    if (req.active) row.active = *req.active;
    DET_RETURN_IF_ERROR(store_->UpdateUser(row));
    if (hash) {
      DET_RETURN_IF_ERROR(store_->SetUserPassword(user_id, *hash));
      row.password_hash = *hash;
    }
  }
  if (on_change_) on_change_(user_id);
  return row;
}

Result<std::vector<store::UserWebSettingRow>> UserAdminService::WebSettings(int64_t user_id) {
  return store_->ListUserWebSettings(user_id);
}

Status UserAdminService::SetWebSettings(int64_t user_id,
                                        const std::vector<store::UserWebSettingRow>& rows) {
  DET_RETURN_IF_ERROR(CheckWebSettings(rows));
  return store_->SetUserWebSettings(user_id, rows, kMaxWebSettings);
}

Status UserAdminService::ResetWebSettings(int64_t user_id) {
  return store_->ResetUserWebSettings(user_id);
}

}  // namespace det::master::server
