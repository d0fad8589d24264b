#include "agent/context_cache.h"

namespace det::agent {

ContextCache::ContextCache(size_t max_bytes) : max_bytes_(max_bytes) {}

std::optional<std::string> ContextCache::KeyFor(
    const std::string& cluster_id, const std::map<std::string, std::string>& start_env) {
  auto type = start_env.find("DET_TASK_TYPE");
  auto exp = start_env.find("DET_EXPERIMENT_ID");
  if (cluster_id.empty() || type == start_env.end() || type->second != "TRIAL" ||
      exp == start_env.end() || exp->second.empty()) {
    return std::nullopt;
  }
  for (char c : exp->second) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  return cluster_id + "/experiment/" + exp->second;
}

Result<ContextCache::Blob> ContextCache::GetOrFetch(const std::string& key, const Fetch& fetch) {
  std::unique_lock<std::mutex> lock(mu_);
  // Wait while someone else fetches this key; take its answer when it succeeded.
  cv_.wait(lock, [&] { return entries_.count(key) || !fetching_.count(key); });
  if (auto it = entries_.find(key); it != entries_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.pos);
    ++hits_;
    return it->second.blob;
  }
  fetching_.insert(key);
  lock.unlock();
  Result<std::string> fetched = fetch();
  lock.lock();
  fetching_.erase(key);
  cv_.notify_all();
  if (!fetched.ok()) return fetched.status();
  Blob blob = std::make_shared<const std::string>(std::move(fetched).value());
  InsertLocked(key, blob);
  return blob;
}

void ContextCache::InsertLocked(const std::string& key, Blob blob) {
  if (blob->size() > max_bytes_ || entries_.count(key)) return;
  while (bytes_ + blob->size() > max_bytes_ && !lru_.empty()) {
    auto victim = entries_.find(lru_.back());
    bytes_ -= victim->second.blob->size();
    entries_.erase(victim);
    lru_.pop_back();
  }
  lru_.push_front(key);
  bytes_ += blob->size();
  entries_[key] = Entry{std::move(blob), lru_.begin()};
}

size_t ContextCache::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

size_t ContextCache::entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

size_t ContextCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

}  // namespace det::agent
