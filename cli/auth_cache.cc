#include "cli/auth_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace det::cli {

std::string DefaultAuthCachePath() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  std::string base;
  if (xdg != nullptr && xdg[0] != '\0') {
    base = xdg;
  } else {
    const char* home = std::getenv("HOME");
    base = std::string(home != nullptr ? home : ".") + "/.config";
  }
  return base + "/determined/auth.json";
}

void AuthCache::Load() {
  data_ = nlohmann::json::object();
  std::ifstream in(path_);
  if (!in) return;
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json parsed = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object()) data_ = std::move(parsed);
}

Status AuthCache::Save() const {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p(path_);
  if (p.has_parent_path()) {
    fs::create_directories(p.parent_path(), ec);
    if (ec) return Internal("cannot create " + p.parent_path().string() + ": " + ec.message());
  }
  nlohmann::json out = data_;
  if (!out.contains("version")) out["version"] = 1;
  std::string tmp = path_ + ".tmp." + std::to_string(getpid());
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) return Internal("cannot write " + tmp);
    f << out.dump(4) << "\n";
    if (!f) return Internal("cannot write " + tmp);
  }
  chmod(tmp.c_str(), 0600);
  fs::rename(tmp, p, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Internal("cannot replace " + path_);
  }
  return Status::Ok();
}

const nlohmann::json* AuthCache::FindMaster(const std::string& master) const {
  auto masters = data_.find("masters");
  if (masters == data_.end() || !masters->is_object()) return nullptr;
  auto entry = masters->find(master);
  if (entry == masters->end() || !entry->is_object()) return nullptr;
  return &*entry;
}

nlohmann::json* AuthCache::MasterEntry(const std::string& master) {
  nlohmann::json& masters = data_["masters"];
  if (!masters.is_object()) masters = nlohmann::json::object();
  nlohmann::json& entry = masters[master];
  if (!entry.is_object()) entry = nlohmann::json::object();
  if (!entry["tokens"].is_object()) entry["tokens"] = nlohmann::json::object();
  return &entry;
}

std::optional<std::string> AuthCache::ActiveUser(const std::string& master) const {
  const nlohmann::json* entry = FindMaster(master);
  if (entry == nullptr) return std::nullopt;
  auto it = entry->find("active_user");
  if (it == entry->end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<std::string> AuthCache::Token(const std::string& master,
                                            const std::string& user) const {
  const nlohmann::json* entry = FindMaster(master);
  if (entry == nullptr) return std::nullopt;
  auto tokens = entry->find("tokens");
  if (tokens == entry->end() || !tokens->is_object()) return std::nullopt;
  auto it = tokens->find(user);
  if (it == tokens->end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::vector<std::string> AuthCache::Users(const std::string& master) const {
  std::vector<std::string> out;
  const nlohmann::json* entry = FindMaster(master);
  if (entry == nullptr) return out;
  auto tokens = entry->find("tokens");
  if (tokens == entry->end() || !tokens->is_object()) return out;
  for (const auto& [user, token] : tokens->items()) {
    if (token.is_string()) out.push_back(user);
  }
  return out;  // nlohmann's objects iterate in key order
}

void AuthCache::SetToken(const std::string& master, const std::string& user,
                         const std::string& token) {
  (*MasterEntry(master))["tokens"][user] = token;
}

void AuthCache::SetActiveUser(const std::string& master, const std::string& user) {
  (*MasterEntry(master))["active_user"] = user;
}

void AuthCache::DropUser(const std::string& master, const std::string& user) {
  if (FindMaster(master) == nullptr) return;
  nlohmann::json* entry = MasterEntry(master);
  (*entry)["tokens"].erase(user);
  auto it = entry->find("active_user");
  if (it != entry->end() && it->is_string() && it->get<std::string>() == user) {
    (*entry)["active_user"] = nullptr;
  }
}

}  // namespace det::cli
