// Walks the router's whole route table (RouteAuthTable) and calls every route without a
// credential, with a wrong token, with the allocation token of another trial and as a non-admin
// user who owns nothing, asserting 401/403 where the route's auth class says so. A route that
// is neither WithAuth's nor NoAuth's fails the walk, and so does a new public route that is not
// on the list below: a new route cannot forget auth.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "common/clock.h"
#include "common/test_dir.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/store/session_token.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::api {
namespace {

// The routes that take no user credential. The agent routes under /agents/ check the agent
// credential instead (AgentRoutesRefuseAMissingOrWrongAgentSecret walks them).
const std::set<std::string> kPublicRoutes = {
    "GET /",
    "GET /info",
    "GET /api/v1/master",
    "POST /api/v1/auth/login",
    "GET /det/{path}",
    "POST /agents/{id}/register",
    "GET /agents/{id}/commands",
    "POST /agents/{id}/events",
    // A shell's ssh tunnel comes without a credential (Determined's ProxyCommand sends none);
    // core::AuthorizeTaskProxy refuses everything else without one (401).
    "GET /proxy/{path}",
};

// Routes where the master files an allocation's post under the allocation's own trial (the
// body cannot name another), so another trial's token reaches nothing of the seeded trial.
const std::set<std::string> kFiledUnderOwnTrial = {
    "POST /api/v1/webhooks/custom",
    "POST /api/v1/task/logs",
    "POST /task-logs",
    "POST /api/v1/checkpoints",
};

// Determined's bulk experiment routes answer 200 with one result per experiment: a refusal is
// that experiment's `error` (tests/e2e/test_bulk_experiments.py checks them, and that nothing
// refused changed); a caller who names none gets an empty list.
const std::set<std::string> kAnsweredPerExperiment = {
    "POST /api/v1/projects/{id}/experiments/activate",
    "POST /api/v1/projects/{id}/experiments/pause",
    "POST /api/v1/projects/{id}/experiments/cancel",
    "POST /api/v1/projects/{id}/experiments/kill",
    "POST /api/v1/projects/{id}/experiments/archive",
    "POST /api/v1/projects/{id}/experiments/unarchive",
    "DELETE /api/v1/projects/{id}/experiments/delete",
    "POST /api/v1/projects/{id}/experiments/move",
};

constexpr char kAgentSecret[] = "walk-agent-secret";

struct Seeded {
  int64_t admin_id = 0;
  int64_t bob_id = 0;
  int64_t experiment_id = 0;
  int64_t trial_id = 0;
  std::string checkpoint_uuid = "0b9c5a0e-a07a-4a11-8000-00000000a11c";
  int64_t workspace_id = 0;
  int64_t project_id = 0;
};

class RoutesAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det-routes-auth-");
    auto opened = store::SqliteStore::Open((dir_ / "determined.db").string());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    std::unique_ptr<store::Store> store = std::move(opened).value();
    // Everything the walk acts on belongs to admin.
    ASSERT_TRUE(store->EnsureBuiltinUsers(std::nullopt).ok());
    auto admin = store->GetUserByName("admin");
    ASSERT_TRUE(admin.ok());
    seeded_.admin_id = admin->id;
    store::UserRow bob;
    bob.username = "bob";
    auto bob_id = store->InsertUser(bob);
    ASSERT_TRUE(bob_id.ok()) << bob_id.status().ToString();
    seeded_.bob_id = *bob_id;
    store::ExperimentRow exp;
    exp.state = "PAUSED";
    exp.owner_id = seeded_.admin_id;
    exp.config = nlohmann::json::object();
    exp.job_id = "walk-job";
    auto exp_id = store->InsertExperiment(exp, "");
    ASSERT_TRUE(exp_id.ok()) << exp_id.status().ToString();
    seeded_.experiment_id = *exp_id;
    store::TrialRow trial;
    trial.experiment_id = *exp_id;
    trial.state = "PAUSED";
    trial.request_id = "r1";
    trial.task_id = std::to_string(*exp_id) + ".r1";
    trial.hparams = nlohmann::json::object();
    auto trial_id = store->InsertTrial(trial);
    ASSERT_TRUE(trial_id.ok()) << trial_id.status().ToString();
    seeded_.trial_id = *trial_id;
    store::CheckpointRow ckpt;
    ckpt.uuid = seeded_.checkpoint_uuid;
    ckpt.trial_id = *trial_id;
    ckpt.task_id = trial.task_id;
    ckpt.state = "COMPLETED";
    ASSERT_TRUE(store->AddCheckpoint(ckpt).ok());
    store::AllocationRow alloc;
    alloc.allocation_id = "seeded-task.1";
    alloc.task_id = trial.task_id;
    alloc.trial_id = *trial_id;
    alloc.state = "RUNNING";
    alloc.token = store::AllocationTokenDigest("seeded-allocation-token");
    ASSERT_TRUE(store->UpsertAllocation(alloc).ok());
    store::WorkspaceRow ws;
    ws.name = "admins-workspace";
    ws.user_id = seeded_.admin_id;
    auto ws_id = store->InsertWorkspace(ws);
    ASSERT_TRUE(ws_id.ok()) << ws_id.status().ToString();
    seeded_.workspace_id = *ws_id;
    store::ProjectRow project;
    project.name = "admins-project";
    project.key = "ADMP";
    project.workspace_id = *ws_id;
    project.user_id = seeded_.admin_id;
    auto project_id = store->InsertProject(project);
    ASSERT_TRUE(project_id.ok()) << project_id.status().ToString();
    seeded_.project_id = *project_id;

    server::MasterConfig config;
    config.data_dir = dir_.string();
    config.agent_token = kAgentSecret;  // the agent routes then require it
    ASSERT_TRUE(server::FinalizeMasterConfig(&config).ok());
    master_ = std::make_unique<server::Master>(config, std::move(store), &clock_);
    RegisterRoutes(&router_, master_.get());
    auto token = master_->auth()->CreateSession(seeded_.bob_id);
    ASSERT_TRUE(token.ok());
    bob_token_ = *token;
    // A running allocation of a trial that is not the seeded one.
    master_->auth()->RegisterAllocationDigest(store::AllocationTokenDigest("other-trial-token"),
                                              "other-task.1", seeded_.trial_id + 1000);
  }
  void TearDown() override {
    master_.reset();
    std::filesystem::remove_all(dir_);
  }

  // The pattern with its parameters filled in: the parameter the route's permission looks at
  // names the seeded (admin-owned) resource of its kind.
  std::string FillPath(const RouteAuth& r) const {
    std::string out;
    std::string pattern = r.pattern;
    size_t pos = 0;
    while (pos < pattern.size()) {
      size_t open = pattern.find('{', pos);
      if (open == std::string::npos) {
        out += pattern.substr(pos);
        break;
      }
      size_t close = pattern.find('}', open);
      out += pattern.substr(pos, open - pos);
      out += ValueFor(r, pattern.substr(open + 1, close - open - 1), pattern.substr(0, open));
      pos = close + 1;
    }
    return out;
  }

  std::string ValueFor(const RouteAuth& r, const std::string& param,
                       const std::string& prefix) const {
    Target target = r.access ? r.access->target : Target::kNone;
    if (r.access && param != r.access->param) target = Target::kNone;
    if (target == Target::kNone) {
      // By the collection the parameter is in.
      if (param == "uuid") return seeded_.checkpoint_uuid;
      if (prefix.rfind("/api/v1/experiments/", 0) == 0) target = Target::kExperiment;
      if (prefix.rfind("/api/v1/trials/", 0) == 0 || prefix.rfind("/api/v1/runs/", 0) == 0)
        target = Target::kTrial;
      if (prefix.rfind("/api/v1/workspaces/", 0) == 0) target = Target::kWorkspace;
      if (prefix.rfind("/api/v1/projects/", 0) == 0) target = Target::kProject;
      if (prefix.rfind("/api/v1/allocations/", 0) == 0) target = Target::kAllocation;
      if (prefix.rfind("/api/v1/users/", 0) == 0) return std::to_string(seeded_.admin_id);
    }
    switch (target) {
      case Target::kExperiment:
        return std::to_string(seeded_.experiment_id);
      case Target::kTrial:
        return std::to_string(seeded_.trial_id);
      case Target::kCheckpoint:
        return seeded_.checkpoint_uuid;
      case Target::kAllocation:
        return "seeded-task.1";
      case Target::kWorkspace:
        return std::to_string(seeded_.workspace_id);
      case Target::kProject:
        return std::to_string(seeded_.project_id);
      default:
        return "1";
    }
  }

  // Bodies that name the seeded (admin-owned) resources, for the routes whose handler checks
  // what the body names.
  std::string BodyFor(const RouteAuth& r) const {
    const std::string trial = std::to_string(seeded_.trial_id);
    const std::string uuid = "\"" + seeded_.checkpoint_uuid + "\"";
    const std::string route = r.method + " " + r.pattern;
    if (route == "DELETE /api/v1/checkpoints" || route == "POST /api/v1/checkpoints/rm") {
      return "{\"checkpointUuids\": [" + uuid + "]}";
    }
    if (route == "PATCH /api/v1/checkpoints") {
      return "{\"checkpoints\": [{\"uuid\": " + uuid + ", \"resources\": {}}]}";
    }
    if (route == "POST /api/v1/trials") {
      return "{\"experimentId\": " + std::to_string(seeded_.experiment_id) + "}";
    }
    if (route == "PUT /api/v1/trials") {
      return "{\"createTrialRequest\": {\"experimentId\": " +
             std::to_string(seeded_.experiment_id) + "}, \"externalTrialId\": \"x\"}";
    }
    if (route == "POST /api/v1/trial-source-info") {
      return "{\"trialSourceInfo\": {\"trialId\": " + trial + ", \"checkpointUuid\": " + uuid +
             ", \"trialSourceInfoType\": \"TRIAL_SOURCE_INFO_TYPE_INFERENCE\"}}";
    }
    if (route == "POST /api/v1/runs/start") return "{\"runId\": " + trial + "}";
    if (route == "POST /api/v1/webhooks/custom") {
      return "{\"data\": {\"title\": \"x\"}, \"trialId\": " + trial + "}";
    }
    if (route == "PATCH /api/v1/users/{id}") return "{\"active\": false}";
    if (route == "POST /api/v1/users/{id}/password") return "{\"password\": \"x\"}";
    if (route == "POST /api/v1/job-queues") {
      return "{\"updates\": [{\"jobId\": \"walk-job\", \"priority\": 1}]}";
    }
    return "";
  }

  server::HttpResponse Call(const RouteAuth& r, const std::map<std::string, std::string>& headers) {
    server::HttpRequest req;
    req.method = r.method;
    req.path = FillPath(r);
    req.body = BodyFor(r);
    req.headers = headers;
    req.remote_address = "127.0.0.1";
    return router_.Dispatch(req);
  }

  std::filesystem::path dir_;
  FakeClock clock_;
  Seeded seeded_;
  std::unique_ptr<server::Master> master_;
  server::Router router_;
  std::string bob_token_;
};

bool Is2xx(int status) { return status >= 200 && status < 300; }

TEST_F(RoutesAuthTest, EveryRouteHasAKnownAuthClass) {
  std::set<std::string> public_routes;
  for (const RouteAuth& r : RouteAuthTable(router_)) {
    std::string name = r.method + " " + r.pattern;
    EXPECT_NE(r.auth_class, "unknown")
        << name << ": register it with WithAuth (or NoAuth for a public route)";
    if (r.auth_class == "public") public_routes.insert(name);
  }
  EXPECT_EQ(public_routes, kPublicRoutes)
      << "a public route was added or removed: check that it must be public, then update "
         "kPublicRoutes";
}

TEST_F(RoutesAuthTest, WithoutACredentialEveryPrivateRouteAnswers401) {
  int walked = 0;
  for (const RouteAuth& r : RouteAuthTable(router_)) {
    if (!r.access) continue;
    server::HttpResponse resp = Call(r, {});
    EXPECT_EQ(resp.status, 401) << r.method << " " << FillPath(r) << ": " << resp.body;
    ++walked;
  }
  EXPECT_GT(walked, 100);
}

// Every route under /agents/ (a new one too) refuses a call without the cluster's agent secret
// or with a wrong one, whatever user or allocation token it carries.
TEST_F(RoutesAuthTest, AgentRoutesRefuseAMissingOrWrongAgentSecret) {
  const std::vector<RouteAuth> table = RouteAuthTable(router_);
  const RouteAuth* registration = nullptr;
  int walked = 0;
  for (const RouteAuth& r : table) {
    if (r.pattern.rfind("/agents/", 0) != 0) continue;
    if (r.method == "POST" && r.pattern == "/agents/{id}/register") registration = &r;
    for (const std::map<std::string, std::string>& headers :
         std::vector<std::map<std::string, std::string>>{
             {},
             {{"authorization", "Bearer " + bob_token_}},
             {{"x-det-agent-secret", "not-the-secret"}, {"x-det-agent-key", "some-key"}}}) {
      server::HttpResponse resp = Call(r, headers);
      EXPECT_EQ(resp.status, 401) << r.method << " " << FillPath(r) << " with "
                                  << headers.size() << " header(s): " << resp.body;
    }
    ++walked;
  }
  EXPECT_EQ(walked, 3);
  EXPECT_TRUE(master_->agents()->List().empty()) << "a refused call registered an agent";
  // The secret is what was missing: with it, registration passes the check.
  ASSERT_NE(registration, nullptr);
  server::HttpResponse ok = Call(
      *registration, {{"x-det-agent-secret", kAgentSecret}, {"x-det-agent-key", "walk-key"}});
  EXPECT_NE(ok.status, 401) << ok.body;
}

TEST_F(RoutesAuthTest, AWrongTokenAnswers401) {
  for (const RouteAuth& r : RouteAuthTable(router_)) {
    if (!r.access) continue;
    server::HttpResponse resp = Call(r, {{"authorization", "Bearer not-a-session"}});
    EXPECT_EQ(resp.status, 401) << r.method << " " << FillPath(r) << ": " << resp.body;
    if (r.access->auth == Auth::kUserOrAllocation) {
      resp = Call(r, {{"grpc-metadata-x-allocation-token", "Bearer not-an-allocation"}});
      EXPECT_EQ(resp.status, 401) << r.method << " " << FillPath(r) << ": " << resp.body;
    }
  }
}

TEST_F(RoutesAuthTest, AnotherTrialsAllocationTokenIsRefused) {
  for (const RouteAuth& r : RouteAuthTable(router_)) {
    if (!r.access) continue;
    server::HttpResponse resp =
        Call(r, {{"grpc-metadata-x-allocation-token", "Bearer other-trial-token"}});
    std::string what = r.method + " " + FillPath(r) + " (" + r.auth_class + "): " + resp.body;
    if (kFiledUnderOwnTrial.count(r.method + " " + r.pattern)) {
      // What an allocation posts here goes to its own trial, whatever the body says.
      continue;
    }
    if (r.access->target == Target::kHandler && r.access->auth == Auth::kUserOrAllocation) {
      // The handler checks what the body names (the seeded trial, not the token's).
      EXPECT_FALSE(Is2xx(resp.status)) << what;
    } else {
      EXPECT_EQ(resp.status, 403) << what;
    }
  }
}

TEST_F(RoutesAuthTest, ANonAdminWhoOwnsNothingCannotChangeAnything) {
  int walked = 0;
  for (const RouteAuth& r : RouteAuthTable(router_)) {
    if (!r.access) continue;
    core::Action a = r.access->action;
    if (a == core::Action::kRead || a == core::Action::kCreate || a == core::Action::kEditShared) {
      continue;
    }
    server::HttpResponse resp = Call(r, {{"authorization", "Bearer " + bob_token_}});
    std::string what = r.method + " " + FillPath(r) + " (" + r.auth_class + "): " + resp.body;
    if (kAnsweredPerExperiment.count(r.method + " " + r.pattern)) {
      // No body: bob names no experiment, so nothing is done (200, answered later with no
      // results), or the body's missing field is named (move's destinationProjectId: 400).
      EXPECT_TRUE(resp.status == 200 || resp.status == 400) << what;
    } else if (r.access->target == Target::kHandler) {
      EXPECT_FALSE(Is2xx(resp.status)) << what;
    } else {
      EXPECT_EQ(resp.status, 403) << what;
      EXPECT_NE(resp.body.find("user 'bob' may not"), std::string::npos) << what;
    }
    ++walked;
  }
  EXPECT_GT(walked, 30);
}

TEST_F(RoutesAuthTest, TheOwnerPassesTheCheck) {
  // Admin-owned experiment: its owner's pause gets past the permission check (the Master is
  // not started here, so the action itself may fail; it must not be 401/403).
  auto admin_token = master_->auth()->CreateSession(seeded_.admin_id);
  ASSERT_TRUE(admin_token.ok());
  server::HttpRequest req;
  req.method = "POST";
  req.path = "/api/v1/experiments/" + std::to_string(seeded_.experiment_id) + "/archive";
  req.headers = {{"authorization", "Bearer " + *admin_token}};
  server::HttpResponse resp = router_.Dispatch(req);
  EXPECT_NE(resp.status, 401) << resp.body;
  EXPECT_NE(resp.status, 403) << resp.body;
}

}  // namespace
}  // namespace det::master::api
