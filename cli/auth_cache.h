#pragma once
// AuthCache: the per-master token cache `det` keeps in
// `$XDG_CONFIG_HOME/determined/auth.json` (default `~/.config/determined/auth.json`), in
// Determined's format: {"version": 1, "masters": {"<url>": {"active_user": u,
// "tokens": {u: token}}}}. Unknown keys are kept when the file is rewritten. Writes go to a
// temporary file renamed over the old one, mode 0600. Thread-compatible.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace det::cli {

// The default cache path from the environment ($XDG_CONFIG_HOME, else $HOME/.config).
std::string DefaultAuthCachePath();

class AuthCache {
 public:
  explicit AuthCache(std::string path) : path_(std::move(path)) {}

  // Reads the file; a missing or unreadable/corrupt file reads as empty.
  void Load();
  // Writes the file, creating its directory.
  Status Save() const;

  std::optional<std::string> ActiveUser(const std::string& master) const;
  std::optional<std::string> Token(const std::string& master, const std::string& user) const;
  void SetToken(const std::string& master, const std::string& user, const std::string& token);
  void SetActiveUser(const std::string& master, const std::string& user);
  // The users with a cached token for `master`, by name.
  std::vector<std::string> Users(const std::string& master) const;
  // Drops the user's token; clears the active user if it was that user.
  void DropUser(const std::string& master, const std::string& user);

  const std::string& path() const { return path_; }
  const nlohmann::json& data() const { return data_; }

 private:
  nlohmann::json* MasterEntry(const std::string& master);
  const nlohmann::json* FindMaster(const std::string& master) const;

  std::string path_;
  nlohmann::json data_ = nlohmann::json::object();
};

}  // namespace det::cli
