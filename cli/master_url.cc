#include "cli/master_url.h"

#include <cstdlib>

namespace det::cli {
namespace {
std::optional<std::string> Env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || v[0] == '\0') return std::nullopt;
  return std::string(v);
}
}  // namespace

std::string NormalizeMasterUrl(std::string url) {
  while (!url.empty() && (url.back() == ' ' || url.back() == '\n')) url.pop_back();
  while (!url.empty() && url.front() == ' ') url.erase(0, 1);
  if (url.find("://") == std::string::npos) url = "http://" + url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

std::string ResolveMasterUrl(const std::optional<std::string>& flag,
                             const std::optional<std::string>& det_master,
                             const std::optional<std::string>& det_master_addr) {
  for (const auto* v : {&flag, &det_master, &det_master_addr}) {
    if (v->has_value() && !(*v)->empty()) return NormalizeMasterUrl(**v);
  }
  return kDefaultMasterUrl;
}

std::string ResolveMasterUrlFromEnv(const std::optional<std::string>& flag) {
  return ResolveMasterUrl(flag, Env("DET_MASTER"), Env("DET_MASTER_ADDR"));
}

}  // namespace det::cli
