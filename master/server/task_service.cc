#include "master/server/task_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <sstream>

#include "master/core/exit_policy.h"
#include "master/core/permissions.h"
#include "master/scheduler/job_queue.h"
#include "master/scheduler/pool_config.h"
#include "master/server/master_config.h"
#include "master/server/passwords.h"
#include "master/server/ssh_keys.h"
#include "master/server/task_container.h"
#include "master/store/session_token.h"

namespace det::master::server {

using nlohmann::json;

namespace {

constexpr const char* kQueued = "STATE_QUEUED";
constexpr const char* kStarting = "STATE_STARTING";
constexpr const char* kRunning = "STATE_RUNNING";
constexpr const char* kTerminating = "STATE_TERMINATING";
constexpr const char* kTerminated = "STATE_TERMINATED";

// environment.environment_variables: a list of "K=V" or a per-device map of such lists.
void AddConfigEnv(const json& config, json* env) {
  if (!config.contains("environment") || !config["environment"].is_object()) return;
  const json& ev = config["environment"].value("environment_variables", json());
  const json* list = &ev;
  if (ev.is_object()) {
    if (!ev.contains("cpu")) return;
    list = &ev["cpu"];
  }
  if (!list->is_array()) return;
  for (const auto& item : *list) {
    if (!item.is_string()) continue;
    std::string kv = item.get<std::string>();
    size_t eq = kv.find('=');
    if (eq != std::string::npos) (*env)[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
}

// A short random id in Determined's UUID shape.
std::string NewUuid() {
  std::string hex = NewToken();
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20, 12);
}

}  // namespace

TaskService::TaskService(store::Store* store, const Clock* clock, AuthService* auth,
                         AgentService* agents, Options options)
    : store_(store), clock_(clock), auth_(auth), agents_(agents), options_(std::move(options)) {}

void TaskService::Changed() {
  if (on_change_) on_change_();
}

Status TaskService::Restore(int64_t adopt_deadline_micros) {
  DET_ASSIGN_OR_RETURN(std::vector<store::GenericTaskRow> rows, store_->ListGenericTasks());
  MutexLock lock(&mu_);
  for (auto& row : rows) {
    Task t;
    if (Status st = UnsealLocked(&row); !st.ok()) {
      spdlog::error("task {}: its secrets: {}; skipped", row.task_id, st.message());
      continue;
    }
    std::optional<TaskType> type = ParseTaskType(row.task_type);
    if (!type) {
      spdlog::warn("task {}: unknown type {}; skipped", row.task_id, row.task_type);
      continue;
    }
    t.type = *type;
    Result<TaskConfig> cfg = ParseTaskConfig(t.type, row.config, row.description);
    if (!cfg.ok()) {
      spdlog::warn("task {}: stored config: {}", row.task_id, cfg.status().message());
      continue;
    }
    t.config = std::move(cfg).value();
    t.launch_env = row.secrets.value("env", json::object());
    t.last_activity = clock_->NowMicros();
    t.row = std::move(row);
    if (!Terminal(t)) {
      if (!t.row.allocation_token.empty()) {
        auth_->RegisterAllocationDigest(t.row.allocation_token, t.row.allocation_id, 0);
      }
      if (t.row.state != kQueued) t.adopt_deadline = adopt_deadline_micros;
    }
    std::string id = t.row.task_id;
    tasks_[id] = std::move(t);
  }
  return Status::Ok();
}

TaskService::Task* TaskService::FindLocked(const std::string& task_id) {
  auto it = tasks_.find(task_id);
  return it == tasks_.end() ? nullptr : &it->second;
}

TaskService::Task* TaskService::FindByAllocationLocked(const std::string& allocation_id) {
  if (allocation_id.empty()) return nullptr;
  for (auto& [id, t] : tasks_) {
    if (t.row.allocation_id == allocation_id) return &t;
  }
  return nullptr;
}

std::string TaskService::ResolvedPool(const std::string& pool, int64_t slots) const {
  if (options_.pools == nullptr) return pool;
  scheduler::AllocationRequest probe;
  probe.pool = pool;
  probe.slots = static_cast<int>(slots);
  return scheduler::ResolvePool(*options_.pools, probe);
}

std::string TaskService::PoolLocked(const Task& t) const {
  return ResolvedPool(t.config.resource_pool, t.config.slots);
}

Status TaskService::CheckFulfillable(const TaskConfig& cfg) const {
  if (cfg.slots <= 0 || agents_ == nullptr) return Status::Ok();
  std::string pool = ResolvedPool(cfg.resource_pool, cfg.slots);
  // A task runs on one agent. With none connected yet, it waits for one (Determined refuses).
  int64_t largest = -1;
  for (const AgentService::Agent& a : agents_->List()) {
    if (a.connected && a.resource_pool == pool) {
      largest = std::max<int64_t>(largest, static_cast<int64_t>(a.slots.size()));
    }
  }
  if (largest < 0 || cfg.slots <= largest) return Status::Ok();
  return InvalidArgument("resources.slots: request unfulfillable, please try requesting less slots (" +
                         std::to_string(cfg.slots) + " asked; the largest agent of pool '" + pool +
                         "' has " + std::to_string(largest) + ")");
}

TaskView TaskService::ViewLocked(const Task& t) const {
  TaskView v;
  v.row = t.row;
  v.row.secrets = json::object();  // never shown whole; the API picks what it may show
  if (t.type == TaskType::kShell) {
    v.row.secrets["privateKey"] = t.row.secrets.value("privateKey", "");
    v.row.secrets["publicKey"] = t.row.secrets.value("publicKey", "");
    v.row.secrets["sshUser"] = t.row.secrets.value("sshUser", "");
  }
  if (t.type == TaskType::kNotebook) {
    v.row.secrets["token"] = t.row.secrets.value("token", "");
  }
  v.type = t.type;
  v.resource_pool = PoolLocked(t);
  const scheduler::PoolConfig* pool =
      options_.pools ? options_.pools->Find(v.resource_pool) : nullptr;
  v.priority = t.config.priority.value_or(pool ? pool->scheduler.default_priority
                                               : scheduler::kDefaultPriority);
  v.terminal = Terminal(t);
  return v;
}

Result<const TaskSecretsBox*> TaskService::BoxLocked() {
  if (options_.secrets_key_path.empty()) return static_cast<const TaskSecretsBox*>(nullptr);
  if (!box_) {
    DET_ASSIGN_OR_RETURN(TaskSecretsBox box,
                         TaskSecretsBox::OpenOrCreate(options_.secrets_key_path));
    box_.emplace(std::move(box));
  }
  return &*box_;
}

Status TaskService::UpsertSealedLocked(const store::GenericTaskRow& row) {
  DET_ASSIGN_OR_RETURN(const TaskSecretsBox* box, BoxLocked());
  if (box == nullptr) return store_->UpsertGenericTask(row);
  store::GenericTaskRow sealed = row;
  DET_ASSIGN_OR_RETURN(std::string text, box->Seal(row.secrets.dump()));
  sealed.secrets = json{{"sealed", std::move(text)}};
  return store_->UpsertGenericTask(sealed);
}

Status TaskService::UnsealLocked(store::GenericTaskRow* row) {
  if (!row->secrets.is_object() || !row->secrets.contains("sealed")) return Status::Ok();
  const json& sealed = row->secrets["sealed"];
  if (!sealed.is_string()) return InvalidArgument("secrets.sealed: must be a string");
  DET_ASSIGN_OR_RETURN(const TaskSecretsBox* box, BoxLocked());
  if (box == nullptr) return FailedPrecondition("sealed secrets, but no key file is configured");
  DET_ASSIGN_OR_RETURN(std::string text, box->Open(sealed.get<std::string>()));
  json secrets = json::parse(text, nullptr, false);
  if (!secrets.is_object()) return InvalidArgument("sealed secrets: not a JSON object");
  row->secrets = std::move(secrets);
  return Status::Ok();
}

Status TaskService::SaveLocked(Task& t, store::GenericTaskRow next) {
  DET_RETURN_IF_ERROR(UpsertSealedLocked(next));
  t.row = std::move(next);
  return Status::Ok();
}

void TaskService::MasterLogLocked(const Task& t, const std::string& message) {
  store::TaskLogRow r;
  r.task_id = t.row.task_id;
  r.allocation_id = t.row.allocation_id;
  r.timestamp = clock_->NowMicros();
  r.level = "LOG_LEVEL_INFO";
  r.stdtype = "stdout";
  r.source = "master";
  r.log = message + "\n";
  Status st = store_->AddTaskLogs({r});
  if (!st.ok()) spdlog::warn("task {}: cannot store log line: {}", t.row.task_id, st.message());
  ++log_version_;
  logs_cv_.notify_all();
}

Result<TaskView> TaskService::Launch(const LaunchTaskRequest& req, const Principal& who) {
  if (who.is_allocation) return PermissionDenied("tasks are launched by users");
  std::string task_id = NewUuid();
  std::string title = TaskTypeTitle(req.type);
  DET_ASSIGN_OR_RETURN(TaskConfig cfg, ParseTaskConfig(req.type, req.config,
                                                       title + " (" + task_id.substr(0, 8) + ")"));
  if (options_.pools != nullptr && !cfg.resource_pool.empty() &&
      options_.pools->Find(cfg.resource_pool) == nullptr) {
    std::string names;
    for (const auto& p : options_.pools->pools) names += (names.empty() ? "" : ", ") + p.pool_name;
    return InvalidArgument("resources.resource_pool: no resource pool named '" + cfg.resource_pool +
                           "' (pools: " + names + ")");
  }
  if (options_.resolve_pool) {
    DET_ASSIGN_OR_RETURN(std::string pool,
                         options_.resolve_pool(req.workspace_id, cfg.resource_pool, cfg.slots));
    if (cfg.resource_pool.empty() && pool != ResolvedPool(cfg.resource_pool, cfg.slots)) {
      cfg.resource_pool = pool;  // the workspace's default pool
      if (cfg.defaulted.is_object()) cfg.defaulted["resources"]["resource_pool"] = pool;
    }
  }
  DET_RETURN_IF_ERROR(CheckFulfillable(cfg));
  // Image and bind_mounts checked now, so a bad one fails the launch and not the start.
  DET_RETURN_IF_ERROR(PlanTaskMounts(cfg.defaulted, "cpu").status());
  Task t;
  t.type = req.type;
  t.config = cfg;
  store::GenericTaskRow& row = t.row;
  row.task_id = task_id;
  row.task_type = TaskTypeName(req.type);
  row.owner_id = who.user_id;
  row.workspace_id = req.workspace_id;
  row.username = who.username;
  row.description = cfg.description;
  row.config = cfg.defaulted;
  row.state = kQueued;
  row.job_id = NewUuid();
  row.registered_time = clock_->NowMicros();
  json env = json::object();
  if (req.type == TaskType::kNotebook) {
    row.secrets["token"] = NewToken().substr(0, 48);
    env["DET_NOTEBOOK_TOKEN"] = row.secrets["token"];
  } else if (req.type == TaskType::kShell) {
    DET_ASSIGN_OR_RETURN(SshKeyPair keys, GenerateSshKeyPair("det-shell-" + task_id));
    row.secrets["privateKey"] = keys.private_key;
    row.secrets["publicKey"] = keys.public_key;
    env["DET_SHELL_AUTHORIZED_KEY"] = keys.public_key;
  } else if (req.type == TaskType::kTensorboard) {
    if (req.experiment_ids.empty() && req.trial_ids.empty()) {
      return InvalidArgument("experimentIds, trialIds: a TensorBoard needs at least one");
    }
    env["DET_TENSORBOARD_EXPERIMENT_IDS"] = json(req.experiment_ids).dump();
    env["DET_TENSORBOARD_TRIAL_IDS"] = json(req.trial_ids).dump();
    row.config["experiment_ids"] = req.experiment_ids;
    row.config["trial_ids"] = req.trial_ids;
    row.description = cfg.description;
  }
  row.secrets["env"] = env;
  t.launch_env = env;
  t.last_activity = row.registered_time;
  if (!req.context_tgz.empty()) {
    DET_RETURN_IF_ERROR(store_->PutGenericTaskContext(task_id, req.context_tgz));
  }
  TaskView view;
  {
    MutexLock lock(&mu_);
    DET_RETURN_IF_ERROR(UpsertSealedLocked(row));
    Task& stored = tasks_[task_id] = std::move(t);
    MasterLogLocked(stored, title + " (id: " + task_id + ") is queued");
    view = ViewLocked(stored);
  }
  Changed();
  return view;
}

Result<TaskView> TaskService::Get(const std::string& task_id) {
  MutexLock lock(&mu_);
  Task* t = FindLocked(task_id);
  if (t == nullptr) return NotFound("task " + task_id + " not found");
  return ViewLocked(*t);
}

bool TaskService::Has(const std::string& task_id) {
  MutexLock lock(&mu_);
  return FindLocked(task_id) != nullptr;
}

std::optional<int64_t> TaskService::OwnerOf(const std::string& task_id) {
  MutexLock lock(&mu_);
  Task* t = FindLocked(task_id);
  if (t == nullptr) return std::nullopt;
  return t->row.owner_id;
}

std::optional<std::string> TaskService::TaskOfAllocation(const std::string& allocation_id) {
  MutexLock lock(&mu_);
  Task* t = FindByAllocationLocked(allocation_id);
  if (t == nullptr) return std::nullopt;
  return t->row.task_id;
}

std::vector<TaskView> TaskService::List(std::optional<TaskType> type) {
  MutexLock lock(&mu_);
  std::vector<TaskView> out;
  for (const auto& [id, t] : tasks_) {
    if (type && t.type != *type) continue;
    out.push_back(ViewLocked(t));
  }
  std::sort(out.begin(), out.end(), [](const TaskView& a, const TaskView& b) {
    return a.row.registered_time < b.row.registered_time;
  });
  return out;
}

Status TaskService::EndLocked(Task& t, std::optional<int64_t> exit_code, const std::string& error) {
  store::GenericTaskRow next = t.row;
  next.state = kTerminated;
  next.exit_code = exit_code;
  next.exit_error = error;
  next.end_time = clock_->NowMicros();
  next.ready = false;
  DET_RETURN_IF_ERROR(SaveLocked(t, std::move(next)));
  // Its token dies with it, as a trial allocation's does.
  if (!t.row.allocation_token.empty()) auth_->EndAllocationDigest(t.row.allocation_token);
  std::string title = TaskTypeTitle(t.type);
  if (exit_code) {
    MasterLogLocked(t, title + " (id: " + t.row.task_id + ") exited with code " +
                           std::to_string(*exit_code) + ": " + core::ExitPhrase(*exit_code) +
                           (error.empty() ? "" : ": " + error));
  } else {
    MasterLogLocked(t, title + " (id: " + t.row.task_id + ") was terminated: " + error);
  }
  return Status::Ok();
}

Status TaskService::Kill(const std::string& task_id, const Principal& who) {
  {
    MutexLock lock(&mu_);
    Task* t = FindLocked(task_id);
    if (t == nullptr) return NotFound("task " + task_id + " not found");
    if (!who.admin && who.user_id != t->row.owner_id) {
      return PermissionDenied("user " + who.username + " may not kill task " + task_id +
                              " of user " + t->row.username);
    }
    if (Terminal(*t)) return Status::Ok();
    if (t->row.state == kQueued) {
      DET_RETURN_IF_ERROR(EndLocked(*t, std::nullopt, "killed by " + who.username));
    } else {
      store::GenericTaskRow next = t->row;
      next.state = kTerminating;
      DET_RETURN_IF_ERROR(SaveLocked(*t, std::move(next)));
      agents_->Push(t->row.agent_id, KillCommand{t->row.allocation_id});
      MasterLogLocked(*t, std::string(TaskTypeTitle(t->type)) + " (id: " + task_id +
                              ") is being killed by " + who.username);
    }
  }
  Changed();
  return Status::Ok();
}

Result<std::string> TaskService::Context(const std::string& task_id) {
  {
    MutexLock lock(&mu_);
    if (FindLocked(task_id) == nullptr) return NotFound("task " + task_id + " not found");
  }
  return store_->GetGenericTaskContext(task_id);
}

Status TaskService::SetProxyAddress(const Principal& who, const std::string& allocation_id,
                                    const std::string& address, const std::string& ssh_user) {
  MutexLock lock(&mu_);
  Task* t = FindByAllocationLocked(allocation_id);
  if (t == nullptr || Terminal(*t)) {
    return NotFound("allocation " + allocation_id + " is not a running task's");
  }
  if (who.is_allocation && who.allocation_id != allocation_id) {
    return PermissionDenied("allocation " + who.allocation_id + " may not register " +
                            allocation_id);
  }
  if (!who.is_allocation && !who.admin && who.user_id != t->row.owner_id) {
    return PermissionDenied("only the task's owner or an admin may register its address");
  }
  size_t colon = address.rfind(':');
  if (address.empty() || colon == std::string::npos || colon + 1 >= address.size()) {
    return InvalidArgument("proxyAddress: must be host:port (got \"" + address + "\")");
  }
  store::GenericTaskRow next = t->row;
  next.proxy_address = address;
  if (!ssh_user.empty()) next.secrets["sshUser"] = ssh_user;
  return SaveLocked(*t, std::move(next));
}

Status TaskService::SetReady(const Principal& who, const std::string& allocation_id) {
  MutexLock lock(&mu_);
  Task* t = FindByAllocationLocked(allocation_id);
  if (t == nullptr || Terminal(*t)) {
    return NotFound("allocation " + allocation_id + " is not a running task's");
  }
  if (who.is_allocation && who.allocation_id != allocation_id) {
    return PermissionDenied("allocation " + who.allocation_id + " may not report " + allocation_id +
                            " ready");
  }
  if (!who.is_allocation && !who.admin && who.user_id != t->row.owner_id) {
    return PermissionDenied("only the task's owner or an admin may report it ready");
  }
  if (t->row.ready) return Status::Ok();
  store::GenericTaskRow next = t->row;
  next.ready = true;
  if (next.state == kStarting) next.state = kRunning;
  DET_RETURN_IF_ERROR(SaveLocked(*t, std::move(next)));
  t->last_activity = clock_->NowMicros();
  MasterLogLocked(*t,
                  std::string(TaskTypeTitle(t->type)) + " (id: " + t->row.task_id + ") is ready");
  return Status::Ok();
}

Result<TaskService::ProxyTarget> TaskService::Proxy(const std::string& task_id,
                                                    const Principal* who, bool tunnel) {
  MutexLock lock(&mu_);
  Task* t = FindLocked(task_id);
  if (t == nullptr) {
    // Without a credential nothing tells whether a task exists.
    if (who == nullptr) return Unauthenticated("token missing");
    return NotFound("task " + task_id + " not found");
  }
  std::optional<core::Subject> subject;
  if (who != nullptr) {
    subject.emplace();
    subject->user_id = who->user_id;
    subject->username = who->username;
    subject->admin = who->admin;
    subject->is_allocation = who->is_allocation;
    subject->allocation_id = who->allocation_id;
  }
  core::AccessDecision d = core::AuthorizeTaskProxy(
      subject ? &*subject : nullptr,
      core::TaskProxy{task_id, t->row.task_type, t->row.owner_id, t->row.username}, tunnel);
  if (!d.allowed) {
    return who == nullptr ? Unauthenticated("token missing: " + d.reason)
                          : PermissionDenied(d.reason);
  }
  if (Terminal(*t)) return NotFound("task " + task_id + " has ended");
  if (t->row.proxy_address.empty()) {
    return Unavailable("task " + task_id + " has not registered its service yet; retry");
  }
  t->last_activity = clock_->NowMicros();
  ProxyTarget target;
  target.address = t->row.proxy_address;
  target.type = t->type;
  if (t->type == TaskType::kNotebook) target.notebook_token = t->row.secrets.value("token", "");
  return target;
}

void TaskService::Touch(const std::string& task_id) {
  MutexLock lock(&mu_);
  if (Task* t = FindLocked(task_id)) t->last_activity = clock_->NowMicros();
}

void TaskService::AddToSnapshot(scheduler::ClusterSnapshot* snap) {
  MutexLock lock(&mu_);
  for (const auto& [id, t] : tasks_) {
    if (Terminal(t)) continue;
    scheduler::Job job;
    job.id = t.row.job_id;
    job.weight = t.config.weight;
    job.priority = t.config.priority;
    job.submission_time_us = t.row.registered_time;
    snap->jobs.push_back(job);
    scheduler::AllocationRequest r;
    r.id = t.row.allocation_id.empty() ? "pending-" + id : t.row.allocation_id;
    r.job_id = t.row.job_id;
    r.pool = PoolLocked(t);
    r.slots = static_cast<int>(t.config.slots);
    r.preemptible = false;  // Determined never preempts commands, notebooks, shells, TensorBoards
    r.single_node = true;
    r.request_time_us = t.row.registered_time;
    if (t.row.state != kQueued) {
      r.allocated = std::vector<scheduler::AgentSlots>{{t.row.agent_id, t.row.slot_ids}};
    }
    snap->requests.push_back(std::move(r));
  }
}

bool TaskService::HasPending() {
  MutexLock lock(&mu_);
  for (const auto& [id, t] : tasks_) {
    if (PendingLocked(t)) return true;
  }
  return false;
}

bool TaskService::Owns(const std::string& allocation_id) {
  MutexLock lock(&mu_);
  if (allocation_id.rfind("pending-", 0) == 0) {
    return FindLocked(allocation_id.substr(8)) != nullptr;
  }
  return FindByAllocationLocked(allocation_id) != nullptr;
}

json TaskService::EntrypointLocked(const Task& t, const std::string& links) const {
  json entry;
  switch (t.type) {
    case TaskType::kCommand:
      entry = t.config.entrypoint;
      // `det cmd run 'a; b'` sends one word: a shell line, as Determined runs it.
      if (entry.is_array() && entry.size() == 1) entry = entry[0];
      break;
    case TaskType::kNotebook:
      entry = json::array({"python3", "-m", "determined.exec.notebook"});
      break;
    case TaskType::kShell:
      entry = json::array({"python3", "-m", "determined.exec.shell"});
      break;
    case TaskType::kTensorboard:
      entry = json::array({"python3", "-m", "determined.exec.tensorboard"});
      break;
  }
  if (t.config.work_dir.empty() && links.empty()) return entry;
  // Links of bind_mounts are made in the unpacked context, where the agent starts the process;
  // work_dir: the process then starts there.
  std::string cmd = links;
  if (!t.config.work_dir.empty()) cmd += "cd " + ShellQuote(t.config.work_dir) + " && ";
  if (entry.is_string()) {
    cmd += entry.get<std::string>();
  } else {
    cmd += "exec";
    for (const auto& a : entry) cmd += " " + ShellQuote(a.get<std::string>());
  }
  return json::array({"/bin/sh", "-c", cmd});
}

Status TaskService::Start(const std::string& allocation_id,
                          const std::vector<scheduler::AgentSlots>& parts) {
  if (parts.empty()) return Internal("task allocation " + allocation_id + ": placed on no agent");
  MutexLock lock(&mu_);
  Task* t = allocation_id.rfind("pending-", 0) == 0 ? FindLocked(allocation_id.substr(8))
                                                    : FindByAllocationLocked(allocation_id);
  if (t == nullptr || !PendingLocked(*t)) return Status::Ok();
  const scheduler::AgentSlots& where = parts.front();
  std::optional<AgentService::Agent> agent = agents_->Find(where.agent_id);
  if (!agent) return Internal("task " + t->row.task_id + ": agent " + where.agent_id + " unknown");
  std::string device = "cpu";
  for (const auto& s : agent->slots) {
    if (s.value("type", "cpu") == "cuda") device = "cuda";
  }
  Result<TaskMounts> mounts = PlanTaskMounts(t->config.defaulted, device);
  if (!mounts.ok()) return EndLocked(*t, std::nullopt, mounts.status().message());
  DET_ASSIGN_OR_RETURN(std::string user_token, auth_->CreateSession(t->row.owner_id));
  store::GenericTaskRow next = t->row;
  next.allocation_id = t->row.task_id + ".1";
  const std::string token = NewToken();
  next.allocation_token = store::AllocationTokenDigest(token);  // the row keeps the digest only
  next.agent_id = where.agent_id;
  next.slot_ids = where.slot_ids;
  next.state = kStarting;
  next.start_time = clock_->NowMicros();
  DET_RETURN_IF_ERROR(SaveLocked(*t, std::move(next)));
  auth_->RegisterAllocationDigest(t->row.allocation_token, t->row.allocation_id, 0);

  json env = json::object();
  AddConfigEnv(t->config.defaulted, &env);
  for (const auto& [k, v] : t->launch_env.items()) env[k] = v;
  env["DET_TASK_ID"] = t->row.task_id;
  env["DET_ALLOCATION_ID"] = t->row.allocation_id;
  env["DET_RESOURCES_ID"] = t->row.allocation_id;
  env["DET_SESSION_TOKEN"] = token;
  env["DET_USER"] = t->row.username;
  env["DET_USER_TOKEN"] = user_token;
  env["DET_TASK_TYPE"] = TaskTypeName(t->type);
  if (options_.pools != nullptr) {
    std::string hook = TcdStartupHook(TaskContainerDefaultsFor(
        options_.task_container_defaults ? *options_.task_container_defaults : json(),
        *options_.pools, PoolLocked(*t)));
    if (!hook.empty()) env["DET_TCD_STARTUP_HOOK"] = hook;
  }
  env["DET_CLUSTER_ID"] = options_.cluster_id;
  env["DET_MASTER_ID"] = options_.master_id;
  env["DET_CONTAINER_RANK"] = "0";
  env["DET_CONTAINER_ADDRS"] = json::array({agent->address}).dump();
  env["DET_CONTAINER_SLOT_COUNTS"] = json::array({where.slot_ids.size()}).dump();
  env["DET_PROXY_BASE_PATH"] = "/proxy/" + t->row.task_id + "/";
  StartCommand start;
  start.allocation_id = t->row.allocation_id;
  start.task_id = t->row.task_id;
  start.task_type = TaskTypeName(t->type);
  start.slot_ids = where.slot_ids;
  start.entrypoint = EntrypointLocked(*t, LinkCommands(mounts->links));
  start.env = env;
  start.container = mounts->container;
  for (const std::string& note : mounts->notes) MasterLogLocked(*t, note);
  agents_->Push(where.agent_id, start);
  MasterLogLocked(*t, std::string(TaskTypeTitle(t->type)) + " (id: " + t->row.task_id +
                          ") was assigned to agent " + where.agent_id);
  return Status::Ok();
}

bool TaskService::HandleAgentEvent(const std::string& agent_id, const json& event) {
  {
    MutexLock lock(&mu_);
    Task* t = FindByAllocationLocked(event.value("allocationId", ""));
    if (t == nullptr) return false;
    if (Terminal(*t) || t->row.agent_id != agent_id) return true;
    std::string type = event.value("type", "");
    if (type == "started") {
      // Determined says this once a task's processes run; users and its tests wait for it.
      if (!t->started) MasterLogLocked(*t, "Resources for " + t->row.description + " have started");
      t->started = true;
      t->adopt_deadline = 0;
      // A command is running once its process is; a service once it says it is ready.
      if (t->row.state == kStarting && (t->type == TaskType::kCommand || t->row.ready)) {
        store::GenericTaskRow next = t->row;
        next.state = kRunning;
        Status st = SaveLocked(*t, std::move(next));
        if (!st.ok()) spdlog::error("task {}: {}", t->row.task_id, st.message());
      }
    } else if (type == "exited") {
      Status st = EndLocked(*t, event.value("exitCode", -1), event.value("error", std::string()));
      if (!st.ok()) spdlog::error("task {}: {}", t->row.task_id, st.message());
    }
  }
  // Called on the runtime loop, which runs a scheduling pass itself.
  return true;
}

std::set<std::string> TaskService::ReconcileAgent(const std::string& agent_id,
                                                  const std::set<std::string>& running,
                                                  const std::set<std::string>& starting) {
  std::set<std::string> adopted;
  {
    MutexLock lock(&mu_);
    for (auto& [id, t] : tasks_) {
      if (Terminal(t) || t.row.state == kQueued || t.row.agent_id != agent_id) continue;
      if (running.count(t.row.allocation_id)) {
        adopted.insert(t.row.allocation_id);
        t.started = true;
        t.adopt_deadline = 0;
      } else if (!starting.count(t.row.allocation_id)) {
        Status st = EndLocked(t, -1, "agent " + agent_id + " lost the process");
        if (!st.ok()) spdlog::error("task {}: {}", id, st.message());
      }
    }
  }
  // Called on the runtime loop, which runs a scheduling pass itself.
  return adopted;
}

void TaskService::AgentLost(const std::string& agent_id) {
  {
    MutexLock lock(&mu_);
    for (auto& [id, t] : tasks_) {
      if (Terminal(t) || t.row.state == kQueued || t.row.agent_id != agent_id) continue;
      Status st = EndLocked(t, -1, "agent " + agent_id + " was lost");
      if (!st.ok()) spdlog::error("task {}: {}", id, st.message());
    }
  }
}

void TaskService::Tick() {
  {
    MutexLock lock(&mu_);
    int64_t now = clock_->NowMicros();
    for (auto& [id, t] : tasks_) {
      if (Terminal(t) || t.row.state == kQueued) continue;
      if (t.adopt_deadline > 0 && now > t.adopt_deadline && !t.started) {
        Status st = EndLocked(t, -1, "not re-adopted after master restart");
        if (!st.ok()) spdlog::error("task {}: {}", id, st.message());
        continue;
      }
      if (t.config.idle_timeout_seconds && t.row.ready && t.row.state == kRunning &&
          now - t.last_activity > *t.config.idle_timeout_seconds * 1000000) {
        store::GenericTaskRow next = t.row;
        next.state = kTerminating;
        Status st = SaveLocked(t, std::move(next));
        if (!st.ok()) spdlog::error("task {}: {}", id, st.message());
        agents_->Push(t.row.agent_id, KillCommand{t.row.allocation_id});
        MasterLogLocked(t, std::string(TaskTypeTitle(t.type)) + " (id: " + id +
                               ") is idle for longer than its idle_timeout (" +
                               std::to_string(*t.config.idle_timeout_seconds) + "s): killing it");
      }
    }
  }
}

std::optional<TaskService::JobInfo> TaskService::Job(const std::string& job_id) {
  MutexLock lock(&mu_);
  for (const auto& [id, t] : tasks_) {
    if (t.row.job_id != job_id) continue;
    return JobInfo{id,
                   std::string("TYPE_") + TaskTypeName(t.type),
                   t.row.description,
                   t.row.username,
                   t.row.registered_time,
                   t.row.owner_id};
  }
  return std::nullopt;
}

Status TaskService::UpdateJob(const std::string& job_id, const json& update) {
  MutexLock lock(&mu_);
  Task* t = nullptr;
  for (auto& [id, task] : tasks_) {
    if (task.row.job_id == job_id && !Terminal(task)) t = &task;
  }
  if (t == nullptr) return NotFound("job " + job_id + " not found among active jobs");
  std::string pool_name = PoolLocked(*t);
  const scheduler::PoolConfig* pool = options_.pools ? options_.pools->Find(pool_name) : nullptr;
  if (pool == nullptr)
    return FailedPrecondition("job " + job_id + ": no resource pool " + pool_name);
  scheduler::Job job;
  job.id = job_id;
  job.priority = t->config.priority;
  job.weight = t->config.weight;
  job.submission_time_us = t->row.registered_time;
  auto field = [&](const char* camel, const char* snake) -> const json* {
    if (update.contains(camel)) return &update[camel];
    if (update.contains(snake)) return &update[snake];
    return nullptr;
  };
  TaskConfig cfg = t->config;
  json config = t->row.config;
  if (!config["resources"].is_object()) config["resources"] = json::object();
  std::string change;
  if (const json* v = field("priority", "priority")) {
    if (!v->is_number_integer()) {
      return InvalidArgument("priority: must be an integer between 1 and 99 (got " + v->dump() +
                             ")");
    }
    DET_ASSIGN_OR_RETURN(scheduler::Job updated, scheduler::SetPriority(*pool, job, v->get<int>()));
    cfg.priority = updated.priority;
    config["resources"]["priority"] = *updated.priority;
    change = "priority " + std::to_string(*updated.priority);
  } else if (const json* v = field("weight", "weight")) {
    if (!v->is_number())
      return InvalidArgument("weight: must be a number > 0 (got " + v->dump() + ")");
    DET_ASSIGN_OR_RETURN(scheduler::Job updated,
                         scheduler::SetWeight(*pool, job, v->get<double>()));
    cfg.weight = updated.weight;
    config["resources"]["weight"] = updated.weight;
    std::ostringstream w;
    w << updated.weight;
    change = "weight " + w.str();
  } else if (const json* v = field("resourcePool", "resource_pool")) {
    if (!v->is_string())
      return InvalidArgument("resourcePool: must be a string (got " + v->dump() + ")");
    DET_RETURN_IF_ERROR(
        scheduler::CheckResourcePoolChange(*options_.pools, false, v->get<std::string>()));
    return FailedPrecondition("resourcePool: job " + job_id + " is a " + TaskTypeTitle(t->type) +
                              "'s; only experiments change resource pool");
  } else if (field("aheadOf", "ahead_of") || field("behindOf", "behind_of")) {
    return InvalidArgument("aheadOf/behindOf: job " + job_id + " is a " + TaskTypeTitle(t->type) +
                           "'s, which is ordered by priority and submission time; change its "
                           "priority instead");
  } else {
    return InvalidArgument(
        "updates: each needs one of priority, weight, resourcePool, aheadOf, behindOf");
  }
  store::GenericTaskRow next = t->row;
  next.config = std::move(config);
  DET_RETURN_IF_ERROR(SaveLocked(*t, std::move(next)));
  t->config = std::move(cfg);
  t->config.defaulted = t->row.config;
  MasterLogLocked(*t, std::string(TaskTypeTitle(t->type)) + " (id: " + t->row.task_id + "): job " +
                          job_id + " set to " + change);
  return Status::Ok();
}

std::vector<TaskView> TaskService::LiveTasks() {
  MutexLock lock(&mu_);
  std::vector<TaskView> out;
  for (const auto& [id, t] : tasks_) {
    if (!Terminal(t)) out.push_back(ViewLocked(t));
  }
  return out;
}

Result<std::vector<store::TaskLogRow>> TaskService::Logs(const std::string& task_id,
                                                         int64_t after_id, int64_t limit,
                                                         bool descending) {
  return store_->ListTaskLogsByTask(task_id, after_id, limit, descending);
}

void TaskService::NotifyLogs(const std::string&) {
  MutexLock lock(&mu_);
  ++log_version_;
  logs_cv_.notify_all();
}

int64_t TaskService::LogVersion() {
  MutexLock lock(&mu_);
  return log_version_;
}

void TaskService::WaitForLogs(const std::string&, int64_t after_version, int64_t timeout_ms) {
  MutexLock lock(&mu_);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (log_version_ == after_version) {
    if (logs_cv_.wait_until(mu_, deadline) == std::cv_status::timeout) return;
  }
}

}  // namespace det::master::server
