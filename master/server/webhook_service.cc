#include "master/server/webhook_service.h"

#include <openssl/rand.h>
#include <re2/re2.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "common/http_client.h"
#include "master/searcher/create_action.h"
#include "master/server/workspace_service.h"
#include "master/webhooks/delivery.h"
#include "master/webhooks/match.h"
#include "master/webhooks/webhook.h"

namespace det::master::server {

using nlohmann::json;

struct WebhookService::Regex {
  explicit Regex(const std::string& pattern) : re(pattern, RE2::Quiet) {}
  RE2 re;
};

// What matching and payloads need of an experiment, read once.
struct WebhookService::ExperimentContext {
  webhooks::ExperimentWebhooks settings;
  int64_t workspace_id = 1;
  int64_t project_id = 1;
  std::string workspace;
  std::string project;
};

namespace {

// Experiments and trials remembered for log matching; forgotten all at once beyond this.
constexpr size_t kMaxRemembered = 4096;
constexpr int64_t kBatch = 16;

std::string StringAt(const json& config, const char* a, const char* b = nullptr) {
  const json* j = &config;
  for (const char* key : {a, b}) {
    if (key == nullptr) break;
    if (!j->is_object() || !j->contains(key)) return "";
    j = &(*j)[key];
  }
  return j->is_string() ? j->get<std::string>() : "";
}

}  // namespace

WebhookService::WebhookService(Deps deps) : deps_(std::move(deps)) {}

WebhookService::~WebhookService() { Stop(); }

Status WebhookService::Start() {
  DET_RETURN_IF_ERROR(Reload());
  sender_ = std::thread([this] { SenderLoop(); });
  return Status::Ok();
}

void WebhookService::Stop() {
  {
    MutexLock lock(&wake_mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (sender_.joinable()) sender_.join();
}

Status WebhookService::Reload() {
  DET_ASSIGN_OR_RETURN(std::vector<store::WebhookRow> rows, deps_.store->ListWebhooks());
  std::unordered_map<int64_t, std::shared_ptr<Regex>> regexes;
  for (const store::WebhookRow& w : rows) {
    for (const store::WebhookTriggerRow& t : w.triggers) {
      std::string pattern = webhooks::TriggerRegex(t);
      if (pattern.empty()) continue;
      auto re = std::make_shared<Regex>(pattern);
      if (re->re.ok()) regexes[t.id] = std::move(re);
    }
  }
  MutexLock lock(&mu_);
  webhooks_ = std::move(rows);
  regexes_ = std::move(regexes);
  return Status::Ok();
}

Status WebhookService::CanEdit(const Principal& who, std::optional<int64_t> workspace_id) {
  if (who.is_allocation) return PermissionDenied("a task's token cannot manage webhooks");
  if (who.admin) {
    if (workspace_id && !deps_.workspaces->WorkspaceExists(*workspace_id)) {
      return NotFound("workspace " + std::to_string(*workspace_id) + " not found");
    }
    return Status::Ok();
  }
  if (!workspace_id) return PermissionDenied("only an admin can manage global webhooks");
  Result<store::WorkspaceRow> ws = deps_.workspaces->GetWorkspace(*workspace_id);
  if (!ws.ok() || ws->user_id != who.user_id) {
    // The same answer whether the workspace exists or not: no probing of others' workspaces.
    return PermissionDenied("only an admin or the owner of workspace " +
                            std::to_string(*workspace_id) + " can manage its webhooks");
  }
  return Status::Ok();
}

Result<std::vector<store::WebhookRow>> WebhookService::List(const Principal& who) {
  if (who.is_allocation) return PermissionDenied("a task's token cannot list webhooks");
  DET_ASSIGN_OR_RETURN(std::vector<store::WebhookRow> all, deps_.store->ListWebhooks());
  if (who.admin) return all;
  std::vector<store::WebhookRow> mine;
  std::unordered_map<int64_t, bool> owned;
  for (store::WebhookRow& w : all) {
    if (w.workspace_id) {
      auto it = owned.find(*w.workspace_id);
      if (it == owned.end()) {
        Result<store::WorkspaceRow> ws = deps_.workspaces->GetWorkspace(*w.workspace_id);
        it = owned.emplace(*w.workspace_id, ws.ok() && ws->user_id == who.user_id).first;
      }
      if (!it->second) continue;
    }
    mine.push_back(std::move(w));
  }
  return mine;
}

Result<store::WebhookRow> WebhookService::Create(const Principal& who, const json& body) {
  DET_ASSIGN_OR_RETURN(store::WebhookRow w, webhooks::ParseWebhook(body));
  DET_RETURN_IF_ERROR(CanEdit(who, w.workspace_id));
  DET_ASSIGN_OR_RETURN(store::WebhookRow stored, deps_.store->InsertWebhook(std::move(w)));
  DET_RETURN_IF_ERROR(Reload());
  spdlog::info("webhook {} created by {} ({} to {})", stored.id, who.username, stored.webhook_type,
               stored.url);
  return stored;
}

Result<store::WebhookRow> WebhookService::Find(int64_t id) {
  DET_ASSIGN_OR_RETURN(std::vector<store::WebhookRow> all, deps_.store->ListWebhooks());
  for (store::WebhookRow& w : all) {
    if (w.id == id) return std::move(w);
  }
  return NotFound("webhook " + std::to_string(id) + " not found");
}

Status WebhookService::PatchUrl(const Principal& who, int64_t id, const json& body) {
  DET_ASSIGN_OR_RETURN(store::WebhookRow w, Find(id));
  DET_RETURN_IF_ERROR(CanEdit(who, w.workspace_id));
  DET_ASSIGN_OR_RETURN(std::string url, webhooks::ParseWebhookPatch(body));
  DET_RETURN_IF_ERROR(deps_.store->UpdateWebhookUrl(id, url));
  return Reload();
}

Status WebhookService::Delete(const Principal& who, int64_t id) {
  DET_ASSIGN_OR_RETURN(store::WebhookRow w, Find(id));
  DET_RETURN_IF_ERROR(CanEdit(who, w.workspace_id));
  DET_RETURN_IF_ERROR(deps_.store->DeleteWebhook(id));
  return Reload();
}

webhooks::Stamp WebhookService::NewStamp() const {
  uint8_t bytes[16];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
    int64_t now = deps_.clock->NowMicros();
    for (size_t i = 0; i < sizeof(bytes); ++i) bytes[i] = static_cast<uint8_t>(now >> (i % 8 * 8));
  }
  return {searcher::UuidV4FromBytes(bytes), deps_.clock->NowMicros()};
}

store::WebhookEventRow WebhookService::Event(const std::string& url, std::string payload) const {
  store::WebhookEventRow e;
  e.url = url;
  e.payload = std::move(payload);
  e.next_attempt_at = 0;  // due now
  return e;
}

Status WebhookService::Test(const Principal& who, int64_t id) {
  DET_ASSIGN_OR_RETURN(store::WebhookRow w, Find(id));
  DET_RETURN_IF_ERROR(CanEdit(who, w.workspace_id));
  std::string why;
  std::optional<long> status = Post(w.url, webhooks::TestPayload(w.webhook_type, NewStamp()), &why);
  if (!status)
    return InvalidArgument("error sending the test event to webhook " + std::to_string(id) + ": " +
                           why);
  if (*status >= 400) {
    return InvalidArgument("the webhook server answered the test event of webhook " +
                           std::to_string(id) + " with HTTP " + std::to_string(*status));
  }
  return Status::Ok();
}

Result<std::shared_ptr<const WebhookService::ExperimentContext>> WebhookService::ContextOf(
    int64_t experiment_id) {
  {
    MutexLock lock(&mu_);
    auto it = contexts_.find(experiment_id);
    if (it != contexts_.end()) return it->second;
  }
  DET_ASSIGN_OR_RETURN(store::ExperimentRow row, deps_.store->GetExperiment(experiment_id));
  auto c = std::make_shared<ExperimentContext>();
  c->settings = webhooks::ExperimentWebhooksOf(row.config);
  c->project_id = deps_.workspaces->ProjectOf(experiment_id);
  if (Result<store::ProjectRow> p = deps_.workspaces->GetProject(c->project_id); p.ok()) {
    c->workspace_id = p->workspace_id;
    c->project = p->name;
  }
  if (Result<store::WorkspaceRow> ws = deps_.workspaces->GetWorkspace(c->workspace_id); ws.ok()) {
    c->workspace = ws->name;
  }
  MutexLock lock(&mu_);
  if (contexts_.size() >= kMaxRemembered) contexts_.clear();
  contexts_[experiment_id] = c;
  return std::shared_ptr<const ExperimentContext>(c);
}

webhooks::ExperimentFacts WebhookService::FactsOf(const ExperimentContext& c, int64_t id,
                                                  const std::string& state, const json& config,
                                                  int64_t start, std::optional<int64_t> end) {
  webhooks::ExperimentFacts f;
  f.id = id;
  f.state = state;
  f.name = StringAt(config, "name");
  f.start_micros = start;
  f.end_micros = end;
  f.resource_pool = StringAt(config, "resources", "resource_pool");
  if (config.contains("resources") && config["resources"].is_object() &&
      config["resources"].contains("slots_per_trial") &&
      config["resources"]["slots_per_trial"].is_number_integer()) {
    f.slots_per_trial = config["resources"]["slots_per_trial"].get<int64_t>();
  }
  f.workspace = c.workspace;
  f.project = c.project;
  f.workspace_id = c.workspace_id;
  f.project_id = c.project_id;
  return f;
}

std::vector<store::WebhookEventRow> WebhookService::ExperimentStateEvents(
    const ExperimentState& e) {
  std::vector<store::WebhookRow> candidates;
  {
    MutexLock lock(&mu_);
    for (const store::WebhookRow& w : webhooks_) {
      for (const store::WebhookTriggerRow& t : w.triggers) {
        if (t.trigger_type == "EXPERIMENT_STATE_CHANGE" &&
            t.condition.value("state", "") == e.state) {
          candidates.push_back(w);
          break;
        }
      }
    }
  }
  std::vector<store::WebhookEventRow> out;
  if (candidates.empty()) return out;
  // The context is read now, not cached: the experiment may have moved since.
  {
    MutexLock lock(&mu_);
    contexts_.erase(e.id);
  }
  Result<std::shared_ptr<const ExperimentContext>> c = ContextOf(e.id);
  if (!c.ok()) {
    spdlog::error("webhooks of experiment {}: {}", e.id, c.status().ToString());
    return out;
  }
  webhooks::ExperimentWebhooks settings = webhooks::ExperimentWebhooksOf(*e.config);
  webhooks::ExperimentFacts facts =
      FactsOf(**c, e.id, e.state, *e.config, e.start_micros, e.end_micros);
  for (const store::WebhookRow& w : candidates) {
    if (!webhooks::Reaches(w, &settings, (*c)->workspace_id)) continue;
    out.push_back(
        Event(w.url, webhooks::ExperimentPayload(w.webhook_type, "EXPERIMENT_STATE_CHANGE", facts,
                                                 std::nullopt, NewStamp(), deps_.base_url)));
  }
  return out;
}

std::vector<store::WebhookEventRow> WebhookService::TaskLogEvents(
    const std::vector<store::TaskLogRow>& rows) {
  std::vector<store::WebhookEventRow> out;
  std::unordered_map<int64_t, std::shared_ptr<Regex>> regexes;
  {
    MutexLock lock(&mu_);
    if (regexes_.empty()) return out;
    regexes = regexes_;
  }
  struct Hit {
    const store::TaskLogRow* row;
    int64_t trigger_id;
  };
  std::vector<Hit> hits;
  for (const store::TaskLogRow& r : rows) {
    for (const auto& [trigger_id, re] : regexes) {
      if (RE2::PartialMatch(r.log, re->re)) hits.push_back({&r, trigger_id});
    }
  }
  if (hits.empty()) return out;
  std::vector<store::WebhookRow> all;
  {
    MutexLock lock(&mu_);
    all = webhooks_;
  }
  for (const Hit& h : hits) {
    const store::WebhookRow* hook = nullptr;
    const store::WebhookTriggerRow* trigger = nullptr;
    for (const store::WebhookRow& w : all) {
      for (const store::WebhookTriggerRow& t : w.triggers) {
        if (t.id == h.trigger_id) {
          hook = &w;
          trigger = &t;
        }
      }
    }
    if (hook == nullptr) continue;  // deleted meanwhile
    webhooks::TaskLogFacts facts;
    facts.task_id = h.row->task_id;
    facts.node_name = h.row->agent_id;
    facts.log = h.row->log;
    facts.regex = webhooks::TriggerRegex(*trigger);
    std::shared_ptr<const ExperimentContext> context;
    if (h.row->trial_id > 0) {
      facts.task_type = "TRIAL";
      facts.trial_id = h.row->trial_id;
      std::optional<int64_t> experiment;
      {
        MutexLock lock(&mu_);
        auto it = trial_experiment_.find(h.row->trial_id);
        if (it != trial_experiment_.end()) experiment = it->second;
      }
      if (!experiment) {
        Result<store::TrialRow> trial = deps_.store->GetTrial(h.row->trial_id);
        if (!trial.ok()) continue;
        experiment = trial->experiment_id;
        MutexLock lock(&mu_);
        if (trial_experiment_.size() >= kMaxRemembered) trial_experiment_.clear();
        trial_experiment_[h.row->trial_id] = *experiment;
      }
      facts.experiment_id = *experiment;
      Result<std::shared_ptr<const ExperimentContext>> c = ContextOf(*experiment);
      if (!c.ok()) continue;
      context = *c;
    } else {
      facts.task_type = "TASK";
    }
    int64_t workspace_id = context ? context->workspace_id : 1;
    if (!webhooks::Reaches(*hook, context ? &context->settings : nullptr, workspace_id)) continue;
    store::WebhookEventRow e = Event(
        hook->url, webhooks::TaskLogPayload(hook->webhook_type, facts, NewStamp(), deps_.base_url));
    e.dedupe_task_id =
        h.row->task_id.empty() ? "trial-" + std::to_string(h.row->trial_id) : h.row->task_id;
    e.dedupe_trigger_id = h.trigger_id;
    // Once per task and trigger within this batch too.
    bool repeat = std::any_of(out.begin(), out.end(), [&](const store::WebhookEventRow& o) {
      return o.dedupe_task_id == e.dedupe_task_id && o.dedupe_trigger_id == e.dedupe_trigger_id;
    });
    if (!repeat) out.push_back(std::move(e));
  }
  return out;
}

Status WebhookService::QueueCustom(int64_t experiment_id, int64_t trial_id,
                                   const webhooks::CustomData& data) {
  std::vector<store::WebhookRow> all;
  {
    MutexLock lock(&mu_);
    all = webhooks_;
  }
  if (all.empty()) return Status::Ok();
  DET_ASSIGN_OR_RETURN(store::ExperimentRow row, deps_.store->GetExperiment(experiment_id));
  DET_ASSIGN_OR_RETURN(std::shared_ptr<const ExperimentContext> c, ContextOf(experiment_id));
  webhooks::ExperimentWebhooks settings = webhooks::ExperimentWebhooksOf(row.config);
  webhooks::ExperimentFacts facts =
      FactsOf(*c, experiment_id, row.state, row.config, row.start_time, row.end_time);
  facts.trial_id = trial_id;
  std::vector<store::WebhookEventRow> events;
  for (const store::WebhookRow* w : webhooks::CustomTargets(all, settings, c->workspace_id)) {
    for (const store::WebhookTriggerRow& t : w->triggers) {
      if (t.trigger_type != "CUSTOM") continue;
      events.push_back(
          Event(w->url, webhooks::ExperimentPayload(w->webhook_type, "CUSTOM", facts, data,
                                                    NewStamp(), deps_.base_url)));
    }
  }
  if (events.empty()) return Status::Ok();
  DET_RETURN_IF_ERROR(deps_.store->EnqueueWebhookEvents(events).status());
  Wake();
  return Status::Ok();
}

void WebhookService::Wake() {
  {
    MutexLock lock(&wake_mu_);
    woken_ = true;
  }
  wake_.notify_all();
}

std::optional<long> WebhookService::Post(const std::string& url, const std::string& payload,
                                         std::string* why) {
  int64_t ts = deps_.clock->NowMicros() / 1'000'000;
  HttpClient client(url);
  client.SetTls(TlsClientOptions{});  // the receiver's certificate, checked against system CAs
  client.SetHeader("Content-Type", "application/json; charset=UTF-8");
  client.SetHeader("X-Determined-AI-Signature-Timestamp", std::to_string(ts));
  client.SetHeader("X-Determined-AI-Signature",
                   webhooks::SignPayload(deps_.signing_key, ts, payload));
  Result<HttpResponse> r = client.Request("POST", "", payload, deps_.delivery_timeout_seconds);
  if (!r.ok()) {
    *why = r.status().message();
    return std::nullopt;
  }
  return r->status;
}

bool WebhookService::DeliverDue() {
  while (true) {
    Result<std::vector<store::WebhookEventRow>> due =
        deps_.store->DueWebhookEvents(deps_.clock->NowMicros(), kBatch);
    if (!due.ok()) {
      spdlog::error("webhook queue: {}", due.status().ToString());
      return false;
    }
    if (!DeliverBatch(*due)) return false;
    if (static_cast<int64_t>(due->size()) < kBatch) return true;
  }
}

bool WebhookService::DeliverBatch(const std::vector<store::WebhookEventRow>& due) {
  for (const store::WebhookEventRow& e : due) {
    {
      MutexLock lock(&wake_mu_);
      if (stopping_) return true;
    }
    std::string why;
    std::optional<long> status = Post(e.url, e.payload, &why);
    webhooks::Verdict v = webhooks::AfterAttempt(e.attempts + 1, status, deps_.clock->NowMicros());
    Status st;
    switch (v.kind) {
      case webhooks::Verdict::Kind::kDelivered:
        st = deps_.store->DeleteWebhookEvent(e.id);
        break;
      case webhooks::Verdict::Kind::kRetry:
        spdlog::warn("webhook delivery to {} failed ({}), attempt {} of {}", e.url,
                     status ? "HTTP " + std::to_string(*status) : why, e.attempts + 1,
                     webhooks::kMaxAttempts);
        st = deps_.store->RescheduleWebhookEvent(e.id, e.attempts + 1, v.next_attempt_at);
        break;
      case webhooks::Verdict::Kind::kGiveUp:
        spdlog::error("webhook delivery to {} given up after {} attempt(s) ({})", e.url,
                      e.attempts + 1, status ? "HTTP " + std::to_string(*status) : why);
        st = deps_.store->DeleteWebhookEvent(e.id);
        break;
    }
    if (!st.ok()) {
      spdlog::error("webhook queue: {}", st.ToString());
      return false;
    }
  }
  return true;
}

void WebhookService::SenderLoop() {
  while (true) {
    DeliverDue();
    MutexLock lock(&wake_mu_);
    if (stopping_) return;
    // Woken by new rows; otherwise a look once a second for retries that came due.
    wake_.wait_for(wake_mu_, std::chrono::seconds(1),
                   [this]() NO_THREAD_SAFETY_ANALYSIS { return woken_ || stopping_; });
    woken_ = false;
    if (stopping_) return;
  }
}

}  // namespace det::master::server
