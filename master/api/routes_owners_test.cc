// Two users who share a cluster (issue #32): what alice owns, bob neither reads the private
// parts of nor changes, through any route, with his session or with his trial's allocation token.
// Each test drives the real router over a started Master on a fresh SQLite store.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>

#include "master/api/routes.h"
#include "master/server/master_sqlite_fixture.h"
#include "master/store/session_token.h"

namespace det::master::api {
namespace {

using nlohmann::json;
using server::HttpRequest;
using server::HttpResponse;

constexpr char kUuid[] = "8c9f3a4e-1b2d-4c5e-9f60-7a8b9c0d1e2f";
constexpr char kExperimentYaml[] =
    "name: %s\nsearcher:\n  name: single\n  metric: loss\n  max_length:\n    batches: 1\n";

class RoutesOwnersTest : public server::MasterOverSqliteTest {
 protected:
  RoutesOwnersTest() : MasterOverSqliteTest("det_routes_owners_") {}

  void SetUp() override {
    MasterOverSqliteTest::SetUp();
    {
      std::unique_ptr<store::Store> store = OpenStore();
      ASSERT_TRUE(store->EnsureBuiltinUsers(std::nullopt).ok());
      auto admin = store->GetUserByName("admin");
      ASSERT_TRUE(admin.ok());
      admin_id_ = admin->id;
      for (const char* name : {"alice", "bob"}) {
        store::UserRow u;
        u.username = name;
        auto id = store->InsertUser(u);
        ASSERT_TRUE(id.ok()) << id.status().ToString();
        (std::string(name) == "alice" ? alice_id_ : bob_id_) = *id;
      }
      store::WorkspaceRow ws;
      ws.name = "bobs-workspace";
      ws.user_id = bob_id_;
      auto ws_id = store->InsertWorkspace(ws);
      ASSERT_TRUE(ws_id.ok()) << ws_id.status().ToString();
      store::ProjectRow project;
      project.name = "bobs-project";
      project.key = "BOBP";
      project.workspace_id = *ws_id;
      project.user_id = bob_id_;
      auto project_id = store->InsertProject(project);
      ASSERT_TRUE(project_id.ok()) << project_id.status().ToString();
      bob_project_ = *project_id;
    }
    StartMaster();
    RegisterRoutes(&router_, master_.get());
    alice_ = Session(alice_id_);
    bob_ = Session(bob_id_);
    admin_ = Session(admin_id_);
  }

  std::string Session(int64_t user_id) {
    auto token = master_->auth()->CreateSession(user_id);
    EXPECT_TRUE(token.ok()) << token.status().ToString();
    return token.ok() ? *token : "";
  }

  // Dispatches one request as `token` (a user session; "alloc:<token>" for an allocation's).
  HttpResponse Call(const std::string& method, const std::string& path, const json& body,
                    const std::string& token) {
    HttpRequest req;
    req.method = method;
    req.path = path;
    req.body = body.is_null() ? "" : body.dump();
    req.remote_address = "127.0.0.1";
    if (token.rfind("alloc:", 0) == 0) {
      req.headers["grpc-metadata-x-allocation-token"] = "Bearer " + token.substr(6);
    } else if (!token.empty()) {
      req.headers["authorization"] = "Bearer " + token;
    }
    return server::Settle(router_.Dispatch(req));
  }

  json Ok(const std::string& method, const std::string& path, const json& body,
          const std::string& token) {
    HttpResponse r = Call(method, path, body, token);
    EXPECT_EQ(r.status, 200) << method << " " << path << ": " << r.body;
    json j = json::parse(r.body, nullptr, false);
    return j.is_discarded() ? json::object() : j;
  }

  static std::string Yaml(const std::string& name) {
    std::string out = kExperimentYaml;
    return out.replace(out.find("%s"), 2, name);
  }

  // An unmanaged experiment of the caller; its id.
  int64_t UnmanagedExperiment(const std::string& token, const std::string& name) {
    json r =
        Ok("POST", "/api/v1/experiments", {{"unmanaged", true}, {"config", Yaml(name)}}, token);
    return r["experiment"].value("id", int64_t{0});
  }

  // An unmanaged trial of the experiment: {id, taskId}.
  json UnmanagedTrial(const std::string& token, int64_t experiment_id) {
    json r =
        Ok("POST", "/api/v1/trials", {{"unmanaged", true}, {"experimentId", experiment_id}}, token);
    return r["trial"];
  }

  std::string Launch(const std::string& kind, const json& config, const std::string& token) {
    json r = Ok("POST", "/api/v1/" + kind + "s", {{"config", config}}, token);
    return r[kind].value("id", "");
  }

  server::Router router_;
  int64_t admin_id_ = 0;
  int64_t alice_id_ = 0;
  int64_t bob_id_ = 0;
  int64_t bob_project_ = 0;
  std::string alice_, bob_, admin_;
};

// Defect 3: a shell's private key and a notebook's token reach their owner only; the proxy
// refuses another user's notebook.
TEST_F(RoutesOwnersTest, AShellsKeyAndANotebooksTokenReachOnlyTheirOwner) {
  std::string notebook = Launch("notebook", json::object(), alice_);
  std::string shell = Launch("shell", json::object(), alice_);
  ASSERT_FALSE(notebook.empty());
  ASSERT_FALSE(shell.empty());

  json mine = Ok("GET", "/api/v1/shells/" + shell, nullptr, alice_);
  EXPECT_NE(mine["shell"].value("privateKey", "").find("PRIVATE KEY"), std::string::npos)
      << mine.dump();
  EXPECT_FALSE(Ok("GET", "/api/v1/notebooks/" + notebook, nullptr, alice_)["notebook"]
                   .value("token", "")
                   .empty());
  for (const std::string& other : {bob_, admin_}) {
    json s = Ok("GET", "/api/v1/shells/" + shell, nullptr, other);
    EXPECT_FALSE(s["shell"].contains("privateKey")) << s.dump();
    EXPECT_FALSE(s["shell"].value("publicKey", "").empty()) << "the public key stays visible";
    json n = Ok("GET", "/api/v1/notebooks/" + notebook, nullptr, other);
    EXPECT_FALSE(n["notebook"].contains("token")) << n.dump();
    for (const char* list : {"shells", "notebooks"}) {
      json l = Ok("GET", std::string("/api/v1/") + list, nullptr, other);
      ASSERT_EQ(l[list].size(), 1u) << l.dump();
      EXPECT_FALSE(l[list][0].contains("privateKey")) << l.dump();
      EXPECT_FALSE(l[list][0].contains("token")) << l.dump();
    }
  }
  json own_list = Ok("GET", "/api/v1/shells", nullptr, alice_);
  EXPECT_TRUE(own_list["shells"][0].contains("privateKey"));

  // The proxy: bob is refused; alice gets past the check (her notebook has not registered).
  EXPECT_EQ(Call("GET", "/proxy/" + notebook + "/", nullptr, bob_).status, 403);
  EXPECT_EQ(Call("GET", "/proxy/" + notebook + "/", nullptr, alice_).status, 503);
}

// Defect 3, at rest: the store's row holds neither the private key nor the notebook token.
TEST_F(RoutesOwnersTest, TheStoreHoldsNoTaskSecretInTheClear) {
  std::string notebook = Launch("notebook", json::object(), alice_);
  std::string shell = Launch("shell", json::object(), alice_);
  std::string key =
      Ok("GET", "/api/v1/shells/" + shell, nullptr, alice_)["shell"].value("privateKey", "");
  std::string token =
      Ok("GET", "/api/v1/notebooks/" + notebook, nullptr, alice_)["notebook"].value("token", "");
  ASSERT_FALSE(key.empty());
  ASSERT_FALSE(token.empty());
  // The base64 body of the key, without its armour lines.
  std::string key_body = key.substr(key.find('\n') + 1, 40);

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2((dir_ / "determined.db").string().c_str(), &db, SQLITE_OPEN_READONLY,
                            nullptr),
            SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT task_id, secrets FROM generic_tasks", -1, &st, nullptr),
            SQLITE_OK);
  int rows = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    ++rows;
    const unsigned char* text = sqlite3_column_text(st, 1);
    std::string secrets = text ? reinterpret_cast<const char*>(text) : "";
    EXPECT_EQ(secrets.find(key_body), std::string::npos) << secrets.substr(0, 200);
    EXPECT_EQ(secrets.find(token), std::string::npos) << secrets.substr(0, 200);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  EXPECT_EQ(rows, 2);

  // A restarted master still hands them to their owner.
  StopMaster();
  router_ = server::Router();
  StartMaster();
  RegisterRoutes(&router_, master_.get());
  alice_ = Session(alice_id_);
  EXPECT_EQ(Ok("GET", "/api/v1/shells/" + shell, nullptr, alice_)["shell"].value("privateKey", ""),
            key);
  EXPECT_EQ(
      Ok("GET", "/api/v1/notebooks/" + notebook, nullptr, alice_)["notebook"].value("token", ""),
      token);
}

// Defect 5: a checkpoint is reported again only by its own trial.
TEST_F(RoutesOwnersTest, ACheckpointIsReportedAgainOnlyByItsOwnTrial) {
  json alices = UnmanagedTrial(alice_, UnmanagedExperiment(alice_, "alice-exp"));
  json bobs = UnmanagedTrial(bob_, UnmanagedExperiment(bob_, "bob-exp"));
  auto report = [&](const json& trial, const std::string& state, const std::string& token) {
    json c = {{"uuid", kUuid},
              {"taskId", trial.value("taskId", "")},
              {"state", state},
              {"resources", json::object()},
              {"metadata", {{"steps_completed", 1}, {"who", token == alice_ ? "alice" : "bob"}}}};
    return Call("POST", "/api/v1/checkpoints", {{"checkpoint", c}}, token);
  };
  ASSERT_EQ(report(alices, "STATE_COMPLETED", alice_).status, 200);

  HttpResponse from_bob = report(bobs, "STATE_DELETED", bob_);
  EXPECT_EQ(from_bob.status, 403) << from_bob.body;
  // With his own trial's allocation token.
  master_->auth()->RegisterAllocationDigest(store::AllocationTokenDigest("bobs-allocation"),
                                            "bobs-task.1", bobs.value("id", int64_t{0}));
  HttpResponse from_token = report(bobs, "STATE_ERROR", "alloc:bobs-allocation");
  EXPECT_EQ(from_token.status, 403) << from_token.body;

  json c = Ok("GET", std::string("/api/v1/checkpoints/") + kUuid, nullptr, alice_)["checkpoint"];
  EXPECT_EQ(c.value("state", ""), "STATE_COMPLETED") << c.dump();
  EXPECT_EQ(c["metadata"].value("who", ""), "alice") << c.dump();
  // Its own trial reports it again.
  EXPECT_EQ(report(alices, "STATE_DELETED", alice_).status, 200);
}

// Defect 6: an experiment with an external id is replaced only by its owner.
TEST_F(RoutesOwnersTest, AnExternalIdExperimentIsReplacedOnlyByItsOwner) {
  auto put = [&](const std::string& name, const std::string& token) {
    return Call("PUT", "/api/v1/experiments/by-external-id/ext-1",
                {{"unmanaged", true}, {"config", Yaml(name)}}, token);
  };
  HttpResponse created = put("alices", alice_);
  ASSERT_EQ(created.status, 200) << created.body;
  int64_t id = json::parse(created.body)["experiment"].value("id", int64_t{0});
  ASSERT_GT(id, 0);

  HttpResponse by_bob = put("bobs", bob_);
  EXPECT_EQ(by_bob.status, 403) << by_bob.body;
  json e = Ok("GET", "/api/v1/experiments/" + std::to_string(id), nullptr, alice_);
  EXPECT_EQ(e["experiment"].value("name", ""), "alices") << e.dump();

  // An admin's script does not rewrite it either; its owner's does.
  EXPECT_EQ(put("by-admin", admin_).status, 403);
  EXPECT_EQ(put("alices-again", alice_).status, 200);
  e = Ok("GET", "/api/v1/experiments/" + std::to_string(id), nullptr, alice_);
  EXPECT_EQ(e["experiment"].value("name", ""), "alices-again");
}

// Defect 7: the bulk move moves only what the caller may move (each one's result says why not).
TEST_F(RoutesOwnersTest, TheBulkMoveMovesOnlyTheCallersExperiments) {
  int64_t alices = UnmanagedExperiment(alice_, "alice-exp");
  int64_t bobs = UnmanagedExperiment(bob_, "bob-exp");
  json r = Ok("POST", "/api/v1/experiments/move",
              {{"destinationProjectId", bob_project_}, {"experimentIds", {alices, bobs}}}, bob_);
  ASSERT_EQ(r["results"].size(), 2u) << r.dump();
  EXPECT_NE(r["results"][0].value("error", "").find("may not"), std::string::npos) << r.dump();
  EXPECT_EQ(r["results"][1].value("error", "x"), "") << r.dump();
  auto project_of = [&](int64_t id) {
    return Ok("GET", "/api/v1/experiments/" + std::to_string(id), nullptr, alice_)["experiment"]
        .value("projectId", int64_t{0});
  };
  EXPECT_EQ(project_of(alices), 1);
  EXPECT_EQ(project_of(bobs), bob_project_);
}

// Defect 7's audit: PATCH /api/v1/checkpoints checks every checkpoint before it changes one.
TEST_F(RoutesOwnersTest, APatchOfCheckpointsIsRefusedWhole) {
  json alices = UnmanagedTrial(alice_, UnmanagedExperiment(alice_, "alice-exp"));
  json bobs = UnmanagedTrial(bob_, UnmanagedExperiment(bob_, "bob-exp"));
  const std::string bob_uuid = "9d0a4b5f-2c3e-4d6f-8a71-8b9c0d1e2f30";
  for (const auto& [trial, uuid, token] :
       {std::tuple{alices, std::string(kUuid), alice_}, std::tuple{bobs, bob_uuid, bob_}}) {
    json c = {{"uuid", uuid},
              {"taskId", trial.value("taskId", "")},
              {"resources", {{"a.bin", 10}}},
              {"metadata", {{"steps_completed", 1}}}};
    ASSERT_EQ(Call("POST", "/api/v1/checkpoints", {{"checkpoint", c}}, token).status, 200);
  }
  json patch = {{"checkpoints",
                 {{{"uuid", bob_uuid}, {"resources", {{"resources", json::object()}}}},
                  {{"uuid", kUuid}, {"resources", {{"resources", json::object()}}}}}}};
  EXPECT_EQ(Call("PATCH", "/api/v1/checkpoints", patch, bob_).status, 403);
  json mine = Ok("GET", "/api/v1/checkpoints/" + bob_uuid, nullptr, bob_)["checkpoint"];
  EXPECT_TRUE(mine["resources"].contains("a.bin")) << "a refused batch changed bob's own one";
}

// Defect 12: log lines go only to tasks the writer owns; a trial's token reads its own task only.
TEST_F(RoutesOwnersTest, TaskLogLinesGoOnlyToTasksTheWriterOwns) {
  std::string command = Launch("command", {{"entrypoint", {"true"}}}, alice_);
  ASSERT_FALSE(command.empty());
  auto post = [&](const std::string& task, const std::string& line, const std::string& token) {
    return Call("POST", "/api/v1/task/logs", {{"logs", {{{"taskId", task}, {"log", line}}}}},
                token);
  };
  HttpResponse r = post(command, "bob was here\n", bob_);
  EXPECT_EQ(r.status, 403) << r.body;
  r = post("no-such-task", "bob was here\n", bob_);
  EXPECT_EQ(r.status, 403) << r.body;
  json bobs = UnmanagedTrial(bob_, UnmanagedExperiment(bob_, "bob-exp"));
  master_->auth()->RegisterAllocationDigest(store::AllocationTokenDigest("bobs-allocation"),
                                            "bobs-task.1", bobs.value("id", int64_t{0}));
  r = post(command, "bob's trial was here\n", "alloc:bobs-allocation");
  EXPECT_EQ(r.status, 403) << r.body;
  r = Call("GET", "/api/v1/tasks/" + command, nullptr, "alloc:bobs-allocation");
  EXPECT_EQ(r.status, 403) << r.body;

  EXPECT_EQ(post(command, "alice's line\n", alice_).status, 200);
  HttpResponse logs = Call("GET", "/api/v1/tasks/" + command + "/logs", nullptr, alice_);
  std::string text;
  if (logs.stream) {
    struct Collect : server::ResponseStream {
      std::string* out;
      explicit Collect(std::string* o) : out(o) {}
      bool Write(const std::string& chunk) override {
        *out += chunk;
        return true;
      }
    } collect(&text);
    logs.stream(collect);
  } else {
    text = logs.body;
  }
  EXPECT_NE(text.find("alice's line"), std::string::npos) << text;
  EXPECT_EQ(text.find("was here"), std::string::npos) << text;
  EXPECT_EQ(Call("GET", "/api/v1/tasks/" + command, nullptr, alice_).status, 200);
}

}  // namespace
}  // namespace det::master::api
