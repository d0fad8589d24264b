// Issue #32, defects 2 and 4, through the router over a real master and SQLite: bob cannot read
// or delete files outside a checkpoint storage (a uuid that is a path, a storage outside the
// allowed roots, a link planted in the storage), experiments name storage only under the allowed
// roots, and the configs the API shows hide the master's storage keys and environment variables
// while the trial's config keeps them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "master/api/routes.h"
#include "master/server/master_sqlite_fixture.h"

namespace det::master::api {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using server::HttpRequest;
using server::HttpResponse;

constexpr char kUuid[] = "0b9c5a0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";

class RoutesPathsTest : public server::MasterOverSqliteTest {
 protected:
  RoutesPathsTest() : MasterOverSqliteTest("det_routes_paths_") {}

  void StartWith(server::MasterConfig config) {
    config.data_dir = (dir_ / "data").string();
    ASSERT_TRUE(server::FinalizeMasterConfig(&config).ok());
    std::unique_ptr<store::Store> store = OpenStore();
    store_ = store.get();
    store::UserRow bob;
    bob.username = "bob";
    auto bob_id = store->InsertUser(bob);
    ASSERT_TRUE(bob_id.ok()) << bob_id.status().ToString();
    bob_id_ = *bob_id;
    master_ = std::make_unique<server::Master>(config, std::move(store), &clock_);
    Status st = master_->Start();
    ASSERT_TRUE(st.ok()) << st.ToString();
    RegisterRoutes(&router_, master_.get());
    auto token = master_->auth()->CreateSession(bob_id_);
    ASSERT_TRUE(token.ok());
    bob_token_ = *token;
  }

  HttpResponse Call(const std::string& method, const std::string& path,
                    const std::string& body = "") {
    HttpRequest req;
    req.method = method;
    req.path = path;
    req.body = body;
    req.remote_address = "127.0.0.1";
    req.headers["authorization"] = "Bearer " + bob_token_;
    return server::Settle(router_.Dispatch(req));
  }

  // A bob-owned experiment with `storage` and a checkpoint `uuid` of its trial, written to the
  // store directly: what an older master let in.
  void SeedCheckpoint(const json& storage, const std::string& uuid) {
    store::ExperimentRow exp;
    exp.state = "COMPLETED";
    exp.owner_id = bob_id_;
    exp.config = {{"checkpoint_storage", storage}};
    exp.job_id = "paths-job-" + std::to_string(++seeded_);
    auto exp_id = store_->InsertExperiment(exp, "");
    ASSERT_TRUE(exp_id.ok()) << exp_id.status().ToString();
    store::TrialRow trial;
    trial.experiment_id = *exp_id;
    trial.state = "COMPLETED";
    trial.request_id = "r" + std::to_string(seeded_);
    trial.task_id = std::to_string(*exp_id) + ".r";
    trial.hparams = json::object();
    auto trial_id = store_->InsertTrial(trial);
    ASSERT_TRUE(trial_id.ok()) << trial_id.status().ToString();
    store::CheckpointRow ckpt;
    ckpt.uuid = uuid;
    ckpt.trial_id = *trial_id;
    ckpt.task_id = trial.task_id;
    ckpt.state = "COMPLETED";
    ckpt.metadata = {{"steps_completed", 1}};
    ASSERT_TRUE(store_->AddCheckpoint(ckpt).ok());
  }

  fs::path Secret() {
    fs::path secret = dir_ / "home" / "alice" / ".ssh";
    fs::create_directories(secret);
    std::ofstream(secret / "id_rsa") << "PRIVATE KEY";
    return secret;
  }

  size_t PendingGc() {
    auto pending = store_->ListGcRequests();
    EXPECT_TRUE(pending.ok());
    return pending.ok() ? pending->size() : 0;
  }

  server::Router router_;
  store::Store* store_ = nullptr;
  int64_t bob_id_ = 0;
  std::string bob_token_;
  int seeded_ = 0;
};

TEST_F(RoutesPathsTest, AUuidThatIsAPathIsRefusedAndNothingIsReadOrDeleted) {
  StartWith({});
  fs::path secret = Secret();
  fs::path checkpoints = dir_ / "data" / "checkpoints";
  fs::create_directories(checkpoints);
  json storage = {{"type", "shared_fs"}, {"host_path", checkpoints.string()}};
  SeedCheckpoint(storage, "../../home/alice/.ssh");

  for (const char* path : {"/checkpoints/../../home/alice/.ssh",
                                  "/checkpoints/..%2F..%2Fhome%2Falice%2F.ssh",
                                  "/api/v1/checkpoints/../../home/alice/.ssh"}) {
    HttpResponse r = Call("GET", path);
    EXPECT_NE(r.status, 200) << path;
    EXPECT_EQ(r.body.find("PRIVATE KEY"), std::string::npos) << path;
  }
  HttpResponse get = Call("GET", "/api/v1/checkpoints/..");
  EXPECT_EQ(get.status, 400) << get.body;
  EXPECT_NE(get.body.find("8-4-4-4-12"), std::string::npos) << get.body;

  for (const char* uuid : {"../../home/alice/.ssh", "..", "", "/"}) {
    HttpResponse del = Call("DELETE", "/api/v1/checkpoints",
                            json{{"checkpointUuids", json::array({uuid})}}.dump());
    EXPECT_EQ(del.status, 400) << uuid << ": " << del.body;
  }
  HttpResponse report = Call("POST", "/api/v1/checkpoints",
                             json{{"uuid", "../x"}, {"metadata", {{"steps_completed", 1}}}}.dump());
  EXPECT_NE(report.status, 200) << report.body;
  EXPECT_EQ(PendingGc(), 0u);
  EXPECT_TRUE(fs::exists(secret / "id_rsa"));
  EXPECT_TRUE(fs::exists(checkpoints));
}

TEST_F(RoutesPathsTest, AStorageOutsideTheAllowedRootsIsNeitherReadNorDeleted) {
  StartWith({});
  fs::path secret = Secret();
  fs::create_directories(secret / kUuid);
  std::ofstream(secret / kUuid / "weights") << "PRIVATE KEY";
  SeedCheckpoint({{"type", "shared_fs"}, {"host_path", secret.string()}}, kUuid);

  HttpResponse get = Call("GET", std::string("/checkpoints/") + kUuid);
  EXPECT_NE(get.status, 200);
  EXPECT_EQ(get.body.find("PRIVATE KEY"), std::string::npos);
  EXPECT_NE(get.body.find("not inside the storage roots"), std::string::npos) << get.body;
  HttpResponse del =
      Call("DELETE", "/api/v1/checkpoints", json{{"checkpointUuids", json::array({kUuid})}}.dump());
  EXPECT_NE(del.status, 200) << del.body;
  EXPECT_EQ(PendingGc(), 0u);
  EXPECT_TRUE(fs::exists(secret / kUuid / "weights"));
}

TEST_F(RoutesPathsTest, ALinkPlantedInTheStorageIsNotFollowed) {
  StartWith({});
  fs::path secret = Secret();
  fs::path checkpoints = dir_ / "data" / "checkpoints";
  fs::create_directories(checkpoints);
  fs::create_directory_symlink(secret, checkpoints / kUuid);
  SeedCheckpoint({{"type", "shared_fs"}, {"host_path", checkpoints.string()}}, kUuid);

  HttpResponse get = Call("GET", std::string("/checkpoints/") + kUuid);
  EXPECT_NE(get.status, 200);
  EXPECT_EQ(get.body.find("PRIVATE KEY"), std::string::npos);
  HttpResponse del =
      Call("DELETE", "/api/v1/checkpoints", json{{"checkpointUuids", json::array({kUuid})}}.dump());
  EXPECT_NE(del.status, 200) << del.body;
  EXPECT_EQ(PendingGc(), 0u);
  EXPECT_TRUE(fs::exists(secret / "id_rsa"));
}

TEST_F(RoutesPathsTest, ExperimentsNameStorageOnlyUnderTheAllowedRoots) {
  server::MasterConfig config;
  config.checkpoint_storage_allowed_roots = std::vector<std::string>{(dir_ / "shared").string()};
  StartWith(config);
  server::Principal bob;
  bob.user_id = bob_id_;
  bob.username = "bob";
  const std::string base =
      "name: x\nentrypoint: python3 train.py\nsearcher: {name: single, metric: m, max_length: "
      "{batches: 1}}\n";
  auto create = [&](const std::string& storage) {
    server::CreateExperimentRequest req;
    req.config_yaml = base + storage;
    req.validate_only = true;
    return master_->experiments()->CreateExperiment(req, bob).status();
  };
  auto create_unmanaged = [&](const std::string& storage) {
    server::UnmanagedService::CreateExperimentRequest req;
    req.config_yaml = base + storage;
    req.validate_only = true;
    return master_->unmanaged()->CreateExperiment(req, bob_id_).status();
  };
  for (const auto& make : {std::function<Status(const std::string&)>(create),
                           std::function<Status(const std::string&)>(create_unmanaged)}) {
    Status bad = make("checkpoint_storage: {type: shared_fs, host_path: " + dir_.string() +
                      "/data}\n");
    EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument) << bad.ToString();
    EXPECT_NE(bad.message().find("checkpoint_storage.host_path"), std::string::npos)
        << bad.message();
    EXPECT_NE(bad.message().find(dir_.string() + "/data"), std::string::npos) << bad.message();
    EXPECT_NE(bad.message().find((dir_ / "shared").string()), std::string::npos) << bad.message();
    EXPECT_EQ(make("checkpoint_storage: {type: shared_fs, host_path: /}\n").code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(make("checkpoint_storage: {type: directory, container_path: /etc}\n").code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(make("checkpoint_storage: {type: shared_fs, host_path: " + dir_.string() +
                   "/shared/../data}\n")
                  .code(),
              StatusCode::kInvalidArgument);
    Status ok = make("checkpoint_storage: {type: shared_fs, host_path: " + dir_.string() +
                     "/shared/bob}\n");
    EXPECT_TRUE(ok.ok()) << ok.ToString();
    Status own = make("checkpoint_storage: {storage_path: mine}\n");  // the master's, inherited
    EXPECT_TRUE(own.ok()) << own.ToString();
  }
}

TEST_F(RoutesPathsTest, TheConfigShownHidesTheMastersSecretsTheTrialsKeepsThem) {
  server::MasterConfig config;
  config.checkpoint_storage = {{"type", "s3"},
                               {"bucket", "ckpts"},
                               {"access_key", "AKIA-MASTER"},
                               {"secret_key", "master-secret-key"}};
  config.task_container_defaults = {{"environment_variables", {"API_KEY=master-api-key"}}};
  StartWith(config);
  server::Principal admin;
  admin.user_id = 1;
  admin.username = "admin";
  admin.admin = true;
  server::CreateExperimentRequest req;
  req.config_yaml =
      "name: x\nentrypoint: python3 train.py\nsearcher: {name: single, metric: m, max_length: "
      "{batches: 1}}\nenvironment: {environment_variables: [MINE=shown]}\n";
  req.activate = false;
  auto created = master_->experiments()->CreateExperiment(req, admin);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  int64_t id = created->experiment->id;

  for (const std::string& path : {"/api/v1/experiments/" + std::to_string(id),
                                  std::string("/api/v1/experiments")}) {
    HttpResponse r = Call("GET", path);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.body.find("master-secret-key"), std::string::npos) << path;
    EXPECT_EQ(r.body.find("AKIA-MASTER"), std::string::npos) << path;
    EXPECT_EQ(r.body.find("master-api-key"), std::string::npos) << path;
    EXPECT_NE(r.body.find("API_KEY=********"), std::string::npos) << path;
    EXPECT_NE(r.body.find("MINE=shown"), std::string::npos) << path;
  }
  // The trial's DET_EXPERIMENT_CONFIG is the stored config: the real values.
  auto view = master_->experiments()->GetExperiment(id);
  ASSERT_TRUE(view.ok());
  std::string stored = view->row.config.dump();
  EXPECT_NE(stored.find("master-secret-key"), std::string::npos);
  EXPECT_NE(stored.find("API_KEY=master-api-key"), std::string::npos);
}

}  // namespace
}  // namespace det::master::api
