// The permission matrix (api/permission_matrix.tsv): every route of the router, called as each
// of six principals, against the outcome its row expects. The principals: alice, who owns every
// object the route's path (or body) names (owner); bob, another non-admin user (other); the
// admin (admin); the allocation token of the trial or task that owns the object (own_token);
// the allocation token of bob's running trial (other_token); no credential (none). Outcomes:
// 401, 403, ok (passed authorization: any other status) and ok+secret (passed, and the answer
// carries one of alice's planted private parts: a shell's key, a notebook's token).
//
// A new route fails the test until its row exists; a row whose route is gone fails it; so does
// an operation of api/openapi.yaml without a row. To regenerate after a reviewed change:
//   DET_WRITE_PERMISSION_MATRIX=$PWD/api/permission_matrix.tsv
//     build/tests/master_permission_matrix_test   (one command line)
// writes the observed matrix there (the test then passes), and `git diff` shows what moved.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/test_dir.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/server/task_service.h"
#include "master/server/unmanaged_service.h"
#include "master/store/session_token.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::api {
namespace {

using nlohmann::json;
using server::HttpRequest;
using server::HttpResponse;

const char* const kPrincipals[] = {"owner", "other", "admin", "own_token", "other_token", "none"};
constexpr int kNumPrincipals = 6;

// Planted private parts: a 2xx answer that shows one of them is "ok+secret".
constexpr char kShellKey[] = "PLANTED-SHELL-PRIVATE-KEY-of-alice";
constexpr char kNotebookToken[] = "PLANTED-NOTEBOOK-TOKEN-of-alice";

// Everything the matrix acts on; alice owns all of it except bob's experiment.
struct Seeded {
  int64_t admin_id = 0;
  int64_t alice_id = 0;
  int64_t bob_id = 0;
  int64_t experiment_id = 0;  // alice's, PAUSED
  int64_t trial_id = 0;
  std::string trial_task_id;
  std::string trial_allocation_id;
  std::string checkpoint_uuid = "7f1c2d3e-4a5b-4c6d-8e9f-a1b2c3d4e5f6";
  int64_t workspace_id = 0;
  int64_t project_id = 0;
  std::string model_name = "alices-model";
  std::string template_name = "alices-template";
  int64_t webhook_id = 0;
  std::string external_experiment_id = "alices-external-experiment";
  int64_t unmanaged_experiment_id = 0;
  // Alice's tasks, each RUNNING with an allocation token of its own: kind -> task id.
  std::map<std::string, std::string> tasks;
  int64_t bob_experiment_id = 0;
  int64_t bob_trial_id = 0;
  std::string bob_trial_task_id;
  // Sessions and allocation tokens (in the template store, valid in every copy).
  std::string admin_session, alice_session, bob_session;
  std::string trial_token = "alices-trial-allocation-token";
  std::string bob_trial_token = "bobs-trial-allocation-token";
};

std::string TaskToken(const std::string& kind) { return "alices-" + kind + "-allocation-token"; }

// One route's observed outcomes, one per principal (kPrincipals order), and its auth class.
struct Row {
  std::string route;  // "METHOD pattern"
  std::vector<std::string> outcomes;
  std::string declared;
};

std::string Join(const Row& r) {
  std::string s = r.route;
  for (const std::string& o : r.outcomes) s += "\t" + o;
  return s + "\t" + r.declared;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The file's rows by route; `error` names the first malformed line.
std::map<std::string, Row> ReadMatrix(const std::string& path, std::string* error) {
  std::map<std::string, Row> out;
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read " + path;
    return out;
  }
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#' || line.rfind("route\t", 0) == 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, '\t')) cells.push_back(cell);
    if (cells.size() != kNumPrincipals + 2) {
      *error = path + ":" + std::to_string(n) + ": expected " +
               std::to_string(kNumPrincipals + 2) + " tab-separated cells (route, " +
               std::to_string(kNumPrincipals) + " outcomes, auth class), got " +
               std::to_string(cells.size());
      return out;
    }
    Row r{cells[0], {cells.begin() + 1, cells.begin() + 1 + kNumPrincipals}, cells.back()};
    if (out.count(r.route)) {
      *error = path + ":" + std::to_string(n) + ": a second row for " + r.route;
      return out;
    }
    out[r.route] = std::move(r);
  }
  return out;
}

void WriteMatrix(const std::string& path, const std::vector<Row>& rows) {
  std::ofstream out(path);
  out << "# The permission matrix: what each principal gets from each route (authorization\n"
         "# only). Checked by master/api/permission_matrix_test.cc, which also explains the\n"
         "# principals and how to regenerate this file. Outcomes: 401, 403, ok (passed the\n"
         "# authorization: any other status), ok+secret (passed, and the answer shows alice's\n"
         "# shell key or notebook token). The last column is the route's declared auth class.\n"
         "route";
  for (const char* p : kPrincipals) out << "\t" << p;
  out << "\tdeclared\n";
  for (const Row& r : rows) out << Join(r) << "\n";
}

std::set<std::string> ContractRoutes() {
  std::set<std::string> out;
  YAML::Node doc = YAML::LoadFile(DET_OPENAPI_PATH);
  for (const auto& path : doc["paths"]) {
    for (const char* m : {"get", "put", "post", "delete", "patch", "head", "options"}) {
      if (path.second[m]) out.insert(Upper(m) + " " + path.first.as<std::string>());
    }
  }
  return out;
}

// A Master over a copy of the template store, with the routes registered (not started: the
// runtime loop decides inline on the caller's thread).
struct Cluster {
  std::filesystem::path dir;
  FakeClock clock;
  std::unique_ptr<server::Master> master;
  server::Router router;

  ~Cluster() {
    master.reset();
    std::filesystem::remove_all(dir);
  }
};

class PermissionMatrixTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = det::testing::FreshTestDir("det-permission-matrix-");
    template_dir_ = root_ / "template";
    std::filesystem::create_directories(template_dir_);
    BuildTemplate();
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  static server::MasterConfig ConfigFor(const std::filesystem::path& dir) {
    server::MasterConfig config;
    config.data_dir = dir.string();
    config.agent_token = "matrix-agent-secret";
    EXPECT_TRUE(server::FinalizeMasterConfig(&config).ok());
    // A second pool, which (unlike the default one) may be bound to workspaces.
    config.pools.pools.push_back(config.pools.pools.front());
    config.pools.pools.back().pool_name = "gpu";
    return config;
  }

  void BuildTemplate() {
    auto opened = store::SqliteStore::Open((template_dir_ / "determined.db").string());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    std::unique_ptr<store::Store> store = std::move(opened).value();
    ASSERT_TRUE(store->EnsureBuiltinUsers(std::nullopt).ok());
    auto admin = store->GetUserByName("admin");
    ASSERT_TRUE(admin.ok());
    s_.admin_id = admin->id;
    for (auto [name, id] : {std::pair<const char*, int64_t*>{"alice", &s_.alice_id},
                            std::pair<const char*, int64_t*>{"bob", &s_.bob_id}}) {
      store::UserRow u;
      u.username = name;
      auto inserted = store->InsertUser(u);
      ASSERT_TRUE(inserted.ok()) << inserted.status().ToString();
      *id = *inserted;
    }

    // An experiment with one trial, its checkpoint and its running allocation.
    auto add_experiment = [&](int64_t owner, const std::string& job, const std::string& token,
                              int64_t* exp_id, int64_t* trial_id, std::string* task_id,
                              std::string* allocation_id) {
      store::ExperimentRow exp;
      exp.state = "PAUSED";
      exp.owner_id = owner;
      exp.config = json::object();
      exp.job_id = job;
      auto e = store->InsertExperiment(exp, "");
      ASSERT_TRUE(e.ok()) << e.status().ToString();
      *exp_id = *e;
      store::TrialRow trial;
      trial.experiment_id = *e;
      trial.state = "PAUSED";
      trial.request_id = "r1";
      trial.task_id = std::to_string(*e) + ".r1";
      trial.hparams = json::object();
      auto t = store->InsertTrial(trial);
      ASSERT_TRUE(t.ok()) << t.status().ToString();
      *trial_id = *t;
      *task_id = trial.task_id;
      store::AllocationRow alloc;
      alloc.allocation_id = trial.task_id + ".1";
      alloc.task_id = trial.task_id;
      alloc.trial_id = *t;
      alloc.state = "RUNNING";
      alloc.token = store::AllocationTokenDigest(token);
      ASSERT_TRUE(store->UpsertAllocation(alloc).ok());
      if (allocation_id) *allocation_id = alloc.allocation_id;
    };
    add_experiment(s_.alice_id, "alices-job", s_.trial_token, &s_.experiment_id, &s_.trial_id,
                   &s_.trial_task_id, &s_.trial_allocation_id);
    add_experiment(s_.bob_id, "bobs-job", s_.bob_trial_token, &s_.bob_experiment_id,
                   &s_.bob_trial_id, &s_.bob_trial_task_id, nullptr);
    store::CheckpointRow ckpt;
    ckpt.uuid = s_.checkpoint_uuid;
    ckpt.trial_id = s_.trial_id;
    ckpt.task_id = s_.trial_task_id;
    ckpt.allocation_id = s_.trial_allocation_id;
    ckpt.state = "COMPLETED";
    ASSERT_TRUE(store->AddCheckpoint(ckpt).ok());

    store::WorkspaceRow ws;
    ws.name = "alices-workspace";
    ws.user_id = s_.alice_id;
    auto ws_id = store->InsertWorkspace(ws);
    ASSERT_TRUE(ws_id.ok()) << ws_id.status().ToString();
    s_.workspace_id = *ws_id;
    store::ProjectRow project;
    project.name = "alices-project";
    project.key = "ALICE";
    project.workspace_id = *ws_id;
    project.user_id = s_.alice_id;
    auto project_id = store->InsertProject(project);
    ASSERT_TRUE(project_id.ok()) << project_id.status().ToString();
    s_.project_id = *project_id;

    store::ModelRow model;
    model.name = s_.model_name;
    model.user_id = s_.alice_id;
    auto m = store->InsertModel(model);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    store::ModelVersionRow version;
    version.model_id = m->id;
    version.version = 1;
    version.checkpoint_uuid = s_.checkpoint_uuid;
    version.user_id = s_.alice_id;
    ASSERT_TRUE(store->InsertModelVersion(version).ok());
    store::WebhookRow webhook;  // of alice's workspace; nothing listens at its url
    webhook.url = "http://127.0.0.1:9/matrix";
    webhook.webhook_type = "DEFAULT";
    webhook.mode = "WORKSPACE";
    webhook.workspace_id = s_.workspace_id;
    webhook.triggers = {{0, 0, "EXPERIMENT_STATE_CHANGE", {{"state", "COMPLETED"}}}};
    auto inserted = store->InsertWebhook(webhook);
    ASSERT_TRUE(inserted.ok()) << inserted.status().ToString();
    s_.webhook_id = inserted->id;

    store::TemplateRow tmpl;
    tmpl.name = s_.template_name;
    tmpl.workspace_id = s_.workspace_id;
    ASSERT_TRUE(store->InsertTemplate(tmpl).ok());

    for (const char* kind : {"command", "notebook", "shell", "tensorboard"}) {
      store::GenericTaskRow task;
      task.task_id = std::string("alices-") + kind;
      task.task_type = Upper(kind);
      task.owner_id = s_.alice_id;
      task.username = "alice";
      task.state = "STATE_RUNNING";
      task.job_id = task.task_id;
      task.allocation_id = task.task_id + ".1";
      task.allocation_token = store::AllocationTokenDigest(TaskToken(kind));
      // A command without an entrypoint is not one: the restore would skip it.
      if (std::string(kind) == "command") task.config = {{"entrypoint", "sleep 100"}};
      if (std::string(kind) == "shell") {
        task.secrets = {{"privateKey", kShellKey}, {"publicKey", "ssh-ed25519 AAAA alice"}};
      }
      if (std::string(kind) == "notebook") task.secrets = {{"token", kNotebookToken}};
      ASSERT_TRUE(store->UpsertGenericTask(task).ok());
      s_.tasks[kind] = task.task_id;
    }

    // Sessions (stored) and alice's unmanaged experiment, through a Master over the template.
    FakeClock clock;
    server::Master master(ConfigFor(template_dir_), std::move(store), &clock);
    for (auto [id, token] :
         {std::pair<int64_t, std::string*>{s_.admin_id, &s_.admin_session},
          std::pair<int64_t, std::string*>{s_.alice_id, &s_.alice_session},
          std::pair<int64_t, std::string*>{s_.bob_id, &s_.bob_session}}) {
      auto session = master.auth()->CreateSession(id);
      ASSERT_TRUE(session.ok()) << session.status().ToString();
      *token = *session;
    }
    server::UnmanagedService::CreateExperimentRequest unmanaged;
    unmanaged.config_yaml = UnmanagedConfig();
    unmanaged.external_id = s_.external_experiment_id;
    auto created = master.unmanaged()->CreateExperiment(unmanaged, s_.alice_id);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    ASSERT_TRUE(created->id.has_value());
    s_.unmanaged_experiment_id = *created->id;
  }

  static std::string UnmanagedConfig() {
    return "name: alices-unmanaged\nsearcher:\n  name: single\n  metric: loss\n";
  }

  // A fresh cluster over a copy of the template store.
  std::unique_ptr<Cluster> NewCluster() {
    auto c = std::make_unique<Cluster>();
    c->dir = root_ / ("case-" + std::to_string(++clusters_));
    std::filesystem::create_directories(c->dir);
    for (const char* f : {"determined.db", "determined.db-wal"}) {
      if (std::filesystem::exists(template_dir_ / f)) {
        std::filesystem::copy_file(template_dir_ / f, c->dir / f);
      }
    }
    auto opened = store::SqliteStore::Open((c->dir / "determined.db").string());
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (!opened.ok()) return nullptr;
    c->master =
        std::make_unique<server::Master>(ConfigFor(c->dir), std::move(opened).value(), &c->clock);
    // The tasks and their allocation tokens, as Master::Start restores them.
    Status restored = c->master->tasks()->Restore(c->clock.NowMicros() + 3600000000LL);
    EXPECT_TRUE(restored.ok()) << restored.ToString();
    RegisterRoutes(&c->router, c->master.get());
    return c;
  }

  // The value of path parameter `param` of `pattern` (before it: `prefix`): alice's object.
  std::string ValueFor(const std::string& param, const std::string& prefix) const {
    auto under = [&](const char* p) { return prefix.rfind(p, 0) == 0; };
    if (param == "path") return under("/proxy/") ? s_.tasks.at("notebook") + "/x" : "x";
    if (param == "uuid") return s_.checkpoint_uuid;
    if (param == "label") return "matrix-label";
    if (param == "slotId" || param == "rid") return "0";
    if (param == "username") return "alice";
    if (param == "resourcePoolName") return "gpu";
    if (param == "modelName") return s_.model_name;
    if (param == "versionNum") return "1";
    if (param == "externalExperimentId") return s_.external_experiment_id;
    if (param == "trialId") return std::to_string(s_.trial_id);
    if (param == "commandId") return s_.tasks.at("command");
    if (param == "notebookId") return s_.tasks.at("notebook");
    if (param == "shellId") return s_.tasks.at("shell");
    if (param == "tensorboardId") return s_.tasks.at("tensorboard");
    if (param == "taskId") return s_.tasks.at("shell");
    if (param == "allocationId") return s_.tasks.at("shell") + ".1";
    if (under("/api/v1/templates/")) return s_.template_name;
    if (under("/api/v1/webhooks/")) return std::to_string(s_.webhook_id);
    if (under("/api/v1/users/")) return std::to_string(s_.alice_id);
    if (under("/api/v1/agents/") || under("/agents/")) return "matrix-agent";
    if (under("/api/v1/experiments/")) return std::to_string(s_.experiment_id);
    if (under("/api/v1/trials/") || under("/api/v1/runs/")) return std::to_string(s_.trial_id);
    if (under("/api/v1/allocations/")) return s_.trial_allocation_id;
    if (under("/api/v1/workspaces/")) return std::to_string(s_.workspace_id);
    if (under("/api/v1/projects/")) return std::to_string(s_.project_id);
    ADD_FAILURE() << "no value for {" << param << "} of a route under " << prefix
                  << ": add one to PermissionMatrixTest::ValueFor";
    return "1";
  }

  std::string FillPath(const std::string& pattern) const {
    std::string out;
    size_t pos = 0;
    while (pos < pattern.size()) {
      size_t open = pattern.find('{', pos);
      if (open == std::string::npos) {
        out += pattern.substr(pos);
        break;
      }
      size_t close = pattern.find('}', open);
      out += pattern.substr(pos, open - pos);
      out += ValueFor(pattern.substr(open + 1, close - open - 1), pattern.substr(0, open));
      pos = close + 1;
    }
    return out;
  }

  // The allocation token of the trial or task that owns what the route's path names.
  std::string OwnToken(const std::string& pattern) const {
    auto under = [&](const char* p) { return pattern.rfind(p, 0) == 0; };
    if (under("/api/v1/commands")) return TaskToken("command");
    if (under("/api/v1/notebooks") || under("/proxy/")) return TaskToken("notebook");
    if (under("/api/v1/shells") || under("/api/v1/tasks/") ||
        under("/api/v1/allocations/{allocationId}")) {
      return TaskToken("shell");
    }
    if (under("/api/v1/tensorboards")) return TaskToken("tensorboard");
    return s_.trial_token;
  }

  // Bodies naming alice's objects, for the routes whose handler checks what the body names
  // (Target::kHandler) and for a few where the body decides what is changed. Every other route
  // gets an empty body: its authorization runs before the body is read.
  std::string BodyFor(const std::string& route) const {
    const std::string trial = std::to_string(s_.trial_id);
    const std::string uuid = "\"" + s_.checkpoint_uuid + "\"";
    if (route == "DELETE /api/v1/checkpoints" || route == "POST /api/v1/checkpoints/rm") {
      return "{\"checkpointUuids\": [" + uuid + "]}";
    }
    if (route == "PATCH /api/v1/checkpoints") {
      return "{\"checkpoints\": [{\"uuid\": " + uuid + ", \"resources\": {}}]}";
    }
    if (route == "POST /api/v1/checkpoints") {
      // An upsert of alice's checkpoint, naming its own task.
      return json{{"checkpoint",
                   {{"uuid", s_.checkpoint_uuid},
                    {"taskId", s_.trial_task_id},
                    {"allocationId", s_.trial_allocation_id},
                    {"state", "STATE_COMPLETED"},
                    {"resources", {{"model.pt", 1}}},
                    {"metadata", {{"steps_completed", 1}}}}}}
          .dump();
    }
    if (route == "POST /api/v1/trials") {
      return json{{"unmanaged", true},
                  {"experimentId", s_.unmanaged_experiment_id},
                  {"hparams", json::object()}}
          .dump();
    }
    if (route == "PUT /api/v1/trials") {
      return json{{"createTrialRequest",
                   {{"unmanaged", true},
                    {"experimentId", s_.unmanaged_experiment_id},
                    {"hparams", json::object()}}},
                  {"externalTrialId", "alices-external-trial"}}
          .dump();
    }
    if (route == "PUT /api/v1/experiments/by-external-id/{externalExperimentId}") {
      return json{{"unmanaged", true}, {"config", UnmanagedConfig()}}.dump();
    }
    if (route == "POST /api/v1/experiments/continue") {
      return json{{"id", s_.experiment_id}}.dump();
    }
    if (route == "POST /api/v1/experiments/move") {
      return json{{"experimentIds", {s_.experiment_id}}, {"destinationProjectId", 1}}.dump();
    }
    if (route == "POST /api/v1/experiments/{id}/move" || route == "POST /api/v1/models/{modelName}/move") {
      return json{{"destinationProjectId", 1}, {"destinationWorkspaceId", 1}}.dump();
    }
    if (route == "POST /api/v1/projects/{id}/move") {
      return json{{"destinationWorkspaceId", 1}}.dump();
    }
    if (route == "POST /api/v1/trial-source-info") {
      return "{\"trialSourceInfo\": {\"trialId\": " + trial + ", \"checkpointUuid\": " + uuid +
             ", \"trialSourceInfoType\": \"TRIAL_SOURCE_INFO_TYPE_INFERENCE\"}}";
    }
    if (route == "POST /api/v1/runs/start") return "{\"runId\": " + trial + "}";
    if (route == "POST /api/v1/webhooks" || route == "PATCH /api/v1/webhooks/{id}") {
      return json{{"url", "http://127.0.0.1:9/matrix"},
                  {"webhookType", "WEBHOOK_TYPE_DEFAULT"},
                  {"workspaceId", s_.workspace_id},
                  {"triggers", {{{"triggerType", "TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE"},
                                 {"condition", {{"state", "COMPLETED"}}}}}}}
          .dump();
    }
    if (route == "POST /api/v1/webhooks/custom") {
      return "{\"data\": {\"title\": \"x\"}, \"trialId\": " + trial + "}";
    }
    if (route == "POST /api/v1/task/logs") {
      return json{{"logs", {{{"taskId", s_.trial_task_id}, {"log", "matrix line\n"}}}}}.dump();
    }
    if (route == "POST /task-logs") {
      return json{{{"task_id", s_.trial_task_id}, {"log", "matrix line\n"}}}.dump();
    }
    // A user making herself admin: only admins manage users.
    if (route == "PATCH /api/v1/users/{id}") return "{\"admin\": true}";
    if (route == "POST /api/v1/users/{id}/password") return "{\"password\": \"matrix\"}";
    if (route == "POST /api/v1/job-queues") {
      // Alice's command is queued work of hers (a task's job id is its task id).
      return json{{"updates", {{{"jobId", s_.tasks.at("command")}, {"priority", 1}}}}}.dump();
    }
    if (route == "POST /api/v1/experiments/{id}/file") return "{\"path\": \"train.py\"}";
    if (route == "POST /api/v1/allocations/{allocationId}/proxy_address") {
      return "{\"proxyAddress\": \"127.0.0.1:1\"}";
    }
    return "";
  }

  std::map<std::string, std::string> HeadersOf(int principal, const std::string& pattern) const {
    auto bearer = [](const std::string& t) { return "Bearer " + t; };
    switch (principal) {
      case 0:
        return {{"authorization", bearer(s_.alice_session)}};
      case 1:
        return {{"authorization", bearer(s_.bob_session)}};
      case 2:
        return {{"authorization", bearer(s_.admin_session)}};
      case 3:
        return {{"grpc-metadata-x-allocation-token", bearer(OwnToken(pattern))}};
      case 4:
        return {{"grpc-metadata-x-allocation-token", bearer(s_.bob_trial_token)}};
      default:
        return {};
    }
  }

  // The outcome class of one call, and its status and body for the failure message.
  static std::string Classify(const HttpResponse& r) {
    if (r.status == 401) return "401";
    if (r.status == 403) return "403";
    if (r.status >= 200 && r.status < 300 &&
        (r.body.find(kShellKey) != std::string::npos ||
         r.body.find(kNotebookToken) != std::string::npos)) {
      return "ok+secret";
    }
    return "ok";
  }

  // Dispatches one call; a deferred answer is waited for (the loop is not running, so it
  // mostly comes at once), a long poll that has not answered by the deadline passed the check.
  static HttpResponse Call(Cluster* c, const std::string& method, const std::string& path,
                           const std::string& body,
                           const std::map<std::string, std::string>& headers) {
    HttpRequest req;
    req.method = method;
    req.path = path;
    req.body = body;
    req.headers = headers;
    req.remote_address = "127.0.0.1";
    HttpResponse resp = c->router.Dispatch(req);
    if (resp.deferred) {
      auto mu = std::make_shared<std::mutex>();
      auto answer = std::make_shared<std::optional<HttpResponse>>();
      auto start = std::move(resp.deferred);
      start([mu, answer](HttpResponse r) {
        std::lock_guard<std::mutex> lock(*mu);
        *answer = std::move(r);
      });
      auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
      while (std::chrono::steady_clock::now() < deadline) {
        {
          std::lock_guard<std::mutex> lock(*mu);
          if (answer->has_value()) return std::move(**answer);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      HttpResponse waiting;
      waiting.status = 200;
      return waiting;
    }
    return resp;
  }

  std::filesystem::path root_;
  std::filesystem::path template_dir_;
  Seeded s_;
  int clusters_ = 0;
};

TEST_F(PermissionMatrixTest, EveryRouteMatchesItsRowOfThePermissionMatrix) {
  std::vector<RouteAuth> table;
  {
    std::unique_ptr<Cluster> c = NewCluster();
    ASSERT_NE(c, nullptr);
    ASSERT_TRUE(c->master->tasks()->Get(s_.tasks.at("shell")).ok());
    table = RouteAuthTable(c->router);
  }
  ASSERT_GT(table.size(), 100u);

  // Each route on a fresh copy of the cluster, the principals from the least to the most
  // entitled (none, other_token, other, own_token, owner, admin); after a call that may have
  // changed something (a 2xx that is not a GET) the next one gets a fresh copy, so no outcome
  // depends on what an earlier call did.
  const int kOrder[] = {5, 4, 1, 3, 0, 2};
  std::vector<Row> observed;
  std::map<std::string, std::string> details;  // "route principal" -> status and body
  for (const RouteAuth& r : table) {
    Row row{r.method + " " + r.pattern, std::vector<std::string>(kNumPrincipals), r.auth_class};
    const std::string path = FillPath(r.pattern);
    const std::string body = BodyFor(row.route);
    std::unique_ptr<Cluster> c;
    for (int p : kOrder) {
      if (!c) c = NewCluster();
      ASSERT_NE(c, nullptr);
      HttpResponse resp = Call(c.get(), r.method, path, body, HeadersOf(p, r.pattern));
      row.outcomes[p] = Classify(resp);
      details[row.route + " " + kPrincipals[p]] =
          std::to_string(resp.status) + " " + resp.body.substr(0, 300);
      if (r.method != "GET" && resp.status >= 200 && resp.status < 300) c.reset();
    }
    observed.push_back(std::move(row));
  }
  std::sort(observed.begin(), observed.end(), [](const Row& a, const Row& b) {
    size_t sa = a.route.find(' '), sb = b.route.find(' ');
    return std::make_pair(a.route.substr(sa + 1), a.route.substr(0, sa)) <
           std::make_pair(b.route.substr(sb + 1), b.route.substr(0, sb));
  });

  if (const char* out = std::getenv("DET_WRITE_PERMISSION_MATRIX"); out && *out) {
    WriteMatrix(out, observed);
    std::cout << "wrote the observed permission matrix (" << observed.size() << " routes) to "
              << out << "; review it before committing\n";
    return;
  }

  std::string error;
  std::map<std::string, Row> expected = ReadMatrix(DET_PERMISSION_MATRIX_PATH, &error);
  ASSERT_TRUE(error.empty()) << error;
  std::vector<std::string> problems;
  std::set<std::string> routes;
  for (const Row& got : observed) {
    routes.insert(got.route);
    auto it = expected.find(got.route);
    if (it == expected.end()) {
      problems.push_back("route without a row: " + Join(got));
      continue;
    }
    const Row& want = it->second;
    if (want.declared != got.declared) {
      problems.push_back(got.route + ": declared auth class is '" + got.declared +
                         "', the row says '" + want.declared + "'");
    }
    for (int p = 0; p < kNumPrincipals; ++p) {
      if (want.outcomes[p] != got.outcomes[p]) {
        problems.push_back(got.route + " as " + kPrincipals[p] + ": expected " +
                           want.outcomes[p] + ", got " + got.outcomes[p] + " (" +
                           details[got.route + " " + kPrincipals[p]] + ")");
      }
    }
  }
  for (const auto& [route, row] : expected) {
    if (!routes.count(route)) problems.push_back("row for a route that no longer exists: " + route);
  }
  for (const std::string& route : ContractRoutes()) {
    if (!expected.count(route)) {
      problems.push_back("operation of api/openapi.yaml without a row: " + route);
    }
  }
  std::string all;
  for (const std::string& p : problems) all += "  " + p + "\n";
  EXPECT_TRUE(problems.empty())
      << problems.size() << " difference(s) from " << DET_PERMISSION_MATRIX_PATH << ":\n"
      << all
      << "If a change is intended, regenerate the file (DET_WRITE_PERMISSION_MATRIX=<path>) "
         "and review the diff against docs' security model.";
}

}  // namespace
}  // namespace det::master::api
