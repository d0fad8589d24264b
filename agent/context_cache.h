#pragma once
// ContextCache: the context directories (gzipped tars) of experiments whose trials this agent
// started, kept in memory so that the next trial of the same experiment starts without
// downloading it again. A trial's context is its experiment's model definition, which never
// changes once the experiment exists, so an entry is valid for as long as the cluster is the
// same: keys carry the cluster id. Concurrent first fetches of one key share one download.

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "common/status.h"

namespace det::agent {

class ContextCache {
 public:
  using Blob = std::shared_ptr<const std::string>;
  using Fetch = std::function<Result<std::string>()>;

  // Keeps at most `max_bytes` of contexts (least recently used go first); a context larger
  // than that is fetched every time.
  explicit ContextCache(size_t max_bytes);
  ContextCache(const ContextCache&) = delete;
  ContextCache& operator=(const ContextCache&) = delete;

  // The key of a start command's context, or nothing when it is not cacheable (only trials
  // are: other tasks have a context of their own per task).
  static std::optional<std::string> KeyFor(const std::string& cluster_id,
                                           const std::map<std::string, std::string>& start_env);

  // The cached context of `key`, else the result of `fetch` (cached when it succeeds). While
  // one caller fetches a key, others asking for it wait and share its answer; a failed fetch
  // is not cached and each waiter then fetches for itself.
  Result<Blob> GetOrFetch(const std::string& key, const Fetch& fetch);

  size_t bytes() const;
  size_t entries() const;
  // How many GetOrFetch calls were answered without fetching.
  size_t hits() const;

 private:
  void InsertLocked(const std::string& key, Blob blob);

  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::list<std::string> lru_;  // guarded by mu_; most recently used first
  struct Entry {
    Blob blob;
    std::list<std::string>::iterator pos;
  };
  std::map<std::string, Entry> entries_;  // guarded by mu_
  std::set<std::string> fetching_;        // guarded by mu_; keys being fetched
  size_t bytes_ = 0;                      // guarded by mu_
  size_t hits_ = 0;                       // guarded by mu_
};

}  // namespace det::agent
