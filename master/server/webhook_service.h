#pragma once
// WebhookService: the webhooks users register (GET/POST /api/v1/webhooks, PATCH/DELETE
// /api/v1/webhooks/{id}, POST .../{id}/test), the deliveries their triggers cause, and the
// thread that makes them.
//
// Who may do what (Determined's rules): an admin manages every webhook; a user manages the
// webhooks of workspaces they own; global webhooks (no workspace) are an admin's. Everyone sees
// the global ones and those of workspaces they own; an admin sees all.
//
// Deliveries are rows of the store's queue, written in the transaction of what caused them (an
// experiment's state change goes with its DecisionWrites, a matching log line with the line),
// so a crash neither loses nor invents one; the sender posts them oldest first with Determined's
// signature headers and retries as master/webhooks/delivery.h says. The rules (checks,
// matching, payloads) are master/webhooks, pure; this class is their I/O.

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "master/server/auth_service.h"
#include "master/store/store.h"
#include "master/webhooks/payload.h"

namespace re2 {
class RE2;
}

namespace det::master::server {

class WorkspaceService;

class WebhookService {
 public:
  struct Deps {
    store::Store* store = nullptr;
    const Clock* clock = nullptr;
    WorkspaceService* workspaces = nullptr;
    std::string signing_key;
    std::string base_url;
    int64_t delivery_timeout_seconds = 10;
  };

  explicit WebhookService(Deps deps);
  ~WebhookService();
  WebhookService(const WebhookService&) = delete;
  WebhookService& operator=(const WebhookService&) = delete;

  // Reads the registered webhooks (start-up), then starts the sender.
  Status Start();
  void Stop();

  // --- The API. ---
  Result<std::vector<store::WebhookRow>> List(const Principal& who);
  Result<store::WebhookRow> Create(const Principal& who, const nlohmann::json& body);
  Status PatchUrl(const Principal& who, int64_t id, const nlohmann::json& body);
  Status Delete(const Principal& who, int64_t id);
  // Posts a test event now and answers whether the receiver took it.
  Status Test(const Principal& who, int64_t id);

  // --- What causes deliveries. ---
  struct ExperimentState {
    int64_t id = 0;
    std::string state;                       // the new state, COMPLETED, ...
    const nlohmann::json* config = nullptr;  // defaulted
    int64_t start_micros = 0;
    std::optional<int64_t> end_micros;
  };
  // The deliveries the experiment's move causes, for the caller to store with it (nothing read
  // when no webhook triggers on that state).
  std::vector<store::WebhookEventRow> ExperimentStateEvents(const ExperimentState& e);
  // The deliveries stored log lines cause (TASK_LOG triggers whose regex a line matches; once
  // per task and trigger), for the caller to store with the lines.
  std::vector<store::WebhookEventRow> TaskLogEvents(const std::vector<store::TaskLogRow>& rows);
  // core_context.alert(): queues one delivery per CUSTOM trigger of the webhooks the
  // experiment's config names.
  Status QueueCustom(int64_t experiment_id, int64_t trial_id, const webhooks::CustomData& data);
  // The queue has new rows (after the caller stored them).
  void Wake();

 private:
  struct Regex;
  struct ExperimentContext;

  Status CanEdit(const Principal& who, std::optional<int64_t> workspace_id);
  // Read from the store (the cache serves the event paths only).
  Result<store::WebhookRow> Find(int64_t id);
  Status Reload() EXCLUDES(mu_);
  // The experiment's webhook settings, workspace and names (cached: read once per experiment).
  Result<std::shared_ptr<const ExperimentContext>> ContextOf(int64_t experiment_id) EXCLUDES(mu_);
  webhooks::ExperimentFacts FactsOf(const ExperimentContext& c, int64_t id,
                                    const std::string& state, const nlohmann::json& config,
                                    int64_t start, std::optional<int64_t> end);
  webhooks::Stamp NewStamp() const;
  store::WebhookEventRow Event(const std::string& url, std::string payload) const;

  // One attempt; the HTTP status, unset on a transport failure.
  std::optional<long> Post(const std::string& url, const std::string& payload, std::string* why);
  void SenderLoop();
  // Delivers what is due; false when the store failed.
  bool DeliverDue();
  bool DeliverBatch(const std::vector<store::WebhookEventRow>& due);

  const Deps deps_;
  mutable Mutex mu_;
  std::vector<store::WebhookRow> webhooks_ GUARDED_BY(mu_);
  // The compiled regexes of TASK_LOG triggers, by trigger id.
  std::unordered_map<int64_t, std::shared_ptr<Regex>> regexes_ GUARDED_BY(mu_);
  std::unordered_map<int64_t, std::shared_ptr<const ExperimentContext>> contexts_ GUARDED_BY(mu_);
  std::unordered_map<int64_t, int64_t> trial_experiment_ GUARDED_BY(mu_);

  Mutex wake_mu_;
  std::condition_variable_any wake_;
  bool woken_ GUARDED_BY(wake_mu_) = false;
  bool stopping_ GUARDED_BY(wake_mu_) = false;
  std::thread sender_;
};

}  // namespace det::master::server
