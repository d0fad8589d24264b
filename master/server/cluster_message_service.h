#pragma once
// ClusterMessageService: the cluster-wide message admins set (PUT/GET/DELETE
// /api/v1/master/cluster_message) and every user sees in the master's info while it is active.
// Kept in the store; the info route reads the copy held here (it is answered without a login
// and must not cost a store read). The rules are master/core/cluster_message.h.

#include <nlohmann/json.hpp>
#include <optional>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "master/store/store.h"

namespace det::master::server {

class ClusterMessageService {
 public:
  ClusterMessageService(store::Store* store, const Clock* clock) : store_(store), clock_(clock) {}

  Status Load() EXCLUDES(mu_);
  // The message users see now (started, not ended), if any.
  std::optional<store::ClusterMessageRow> Active() const EXCLUDES(mu_);
  // The message not yet ended, scheduled ones included (an admin's get).
  std::optional<store::ClusterMessageRow> Current() const EXCLUDES(mu_);
  Status Set(const nlohmann::json& body) EXCLUDES(mu_);
  Status Clear() EXCLUDES(mu_);

 private:
  store::Store* store_;
  const Clock* clock_;
  mutable Mutex mu_;
  std::optional<store::ClusterMessageRow> message_ GUARDED_BY(mu_);
};

}  // namespace det::master::server
