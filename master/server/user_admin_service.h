#pragma once
// UserAdminService: creating users and changing them (POST /api/v1/users, PATCH
// /api/v1/users/{id}; det user create / activate / deactivate / rename / edit /
// change-password), with Determined's rules: only admins create users or change username,
// admin or active; a user may change their own display name and password. Login and sessions
// stay with the auth code; `on_change(user_id)` tells it to forget that user's cached sessions.

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/store/store.h"

namespace det::master::server {

struct UserCreate {
  std::string username;
  bool admin = false;
  bool active = true;
  std::string display_name;
  std::optional<std::string> password;  // plain, or a client hash when password_is_hashed
  bool password_is_hashed = false;
};

// Absent fields stay as they are.
struct UserPatch {
  std::optional<std::string> username;
  std::optional<std::string> display_name;
  std::optional<bool> admin;
  std::optional<bool> active;
  std::optional<std::string> password;
  bool password_is_hashed = false;
};

// Who asks.
struct Actor {
  int64_t user_id = 0;
  bool admin = false;
};

class UserAdminService {
 public:
  UserAdminService(store::Store* store, std::function<void(int64_t)> on_change);

  Result<store::UserRow> Create(const Actor& actor, const UserCreate& req);
  Result<store::UserRow> Patch(const Actor& actor, int64_t user_id, const UserPatch& req);

  // The caller's own web UI settings (GET/POST /api/v1/users/setting, POST .../reset): an empty
  // value deletes its key. Sizes are bounded (CheckWebSettings) so one user cannot fill the
  // store.
  Result<std::vector<store::UserWebSettingRow>> WebSettings(int64_t user_id);
  Status SetWebSettings(int64_t user_id, const std::vector<store::UserWebSettingRow>& rows);
  Status ResetWebSettings(int64_t user_id);

 private:
  store::Store* store_;
  std::function<void(int64_t)> on_change_;
  std::mutex mu_;  // read-modify-write of a user row
};

// The rule for usernames: 1-128 characters, no whitespace. Pure.
Status CheckUsername(const std::string& username);

// Limits of web UI settings: keys and storage paths of at most 256 bytes (a key not empty),
// values of at most 256 KiB, 1,000 settings per request and kMaxWebSettings per user. Pure.
constexpr int64_t kMaxWebSettings = 10000;
Status CheckWebSettings(const std::vector<store::UserWebSettingRow>& rows);

}  // namespace det::master::server
