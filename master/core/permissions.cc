#include "master/core/permissions.h"

namespace det::master::core {
namespace {

AccessDecision Allow() { return AccessDecision{true, ""}; }

AccessDecision Deny(const Subject& who, Action action, const Resource& what, const std::string& why) {
  std::string caller =
      who.is_allocation ? "allocation " + who.allocation_id : "user '" + who.username + "'";
  std::string msg = caller + " may not " + ActionName(action);
  if (!what.kind.empty()) msg += " " + what.kind;
  return AccessDecision{false, msg + ": " + why};
}

// An allocation token reaches its own trial and allocation, and reads its experiment and the
// checkpoints of its experiment or owner.
AccessDecision AuthorizeAllocation(const Subject& who, Action action, const Resource& what) {
  const std::string only_own = "allocation tokens only reach their own trial";
  if (action != Action::kRead && action != Action::kTrialReport) {
    return Deny(who, action, what, only_own);
  }
  if (!what.allocation_id.empty() && what.allocation_id != who.allocation_id) {
    return Deny(who, action, what, "it belongs to another allocation");
  }
  const bool read = action == Action::kRead;
  if (what.trial_id != 0) {
    if (what.trial_id == who.trial_id) return Allow();
    bool shared = read && what.readable_by_owner_trials &&
                  ((what.experiment_id != 0 && what.experiment_id == who.experiment_id) ||
                   (what.owner_id != 0 && what.owner_id == who.owner_id));
    if (shared) return Allow();
    return Deny(who, action, what, "it belongs to another trial");
  }
  if (!what.allocation_id.empty()) return Allow();
  if (read && what.experiment_id != 0 && what.experiment_id == who.experiment_id) return Allow();
  return Deny(who, action, what, only_own);
}

}  // namespace

const char* ActionName(Action action) {
  switch (action) {
    case Action::kRead:
      return "read";
    case Action::kCreate:
      return "create";
    case Action::kModify:
      return "change";
    case Action::kEditShared:
      return "change";
    case Action::kManageUsers:
      return "call";
    case Action::kManageCluster:
      return "call";
    case Action::kTrialReport:
      return "report for";
  }
  return "act on";
}

AccessDecision Authorize(const Subject& who, Action action, const Resource& what) {
  if (who.is_allocation) return AuthorizeAllocation(who, action, what);
  switch (action) {
    case Action::kRead:
    case Action::kCreate:
    case Action::kEditShared:
      return Allow();
    case Action::kModify:
      if (who.admin) return Allow();
      if (what.owner_id != 0 && what.owner_id == who.user_id) return Allow();
      return Deny(who, action, what, "only its owner or an admin may");
    case Action::kManageUsers:
    case Action::kManageCluster:
      if (who.admin) return Allow();
      return Deny(who, action, what, "only an admin may");
    case Action::kTrialReport:
      // A user reporting for a trial (an unmanaged script, a notebook) must own its experiment.
      if (who.admin) return Allow();
      if (what.owner_id != 0 && what.owner_id == who.user_id) return Allow();
      return Deny(who, action, what, "only its owner or an admin may");
  }
  return Deny(who, action, what, "unknown action");
}

AccessDecision AuthorizeTaskProxy(const Subject* who, const TaskProxy& what, bool tunnel) {
  std::string kind = "task " + what.task_id;
  if (who == nullptr) {
    if (tunnel && what.task_type == "SHELL") return Allow();
    return AccessDecision{false, "the proxy of " + kind + " needs a credential (token missing)"};
  }
  if (who->is_allocation) {
    Resource r;
    r.kind = kind;
    return Deny(*who, Action::kModify, r, "allocation tokens do not reach proxies");
  }
  if (who->admin || (what.owner_id != 0 && what.owner_id == who->user_id)) return Allow();
  return AccessDecision{false, "user '" + who->username + "' may not reach the proxy of " + kind +
                             ": only its owner (" + what.owner_name + ") or an admin may"};
}

}  // namespace det::master::core
