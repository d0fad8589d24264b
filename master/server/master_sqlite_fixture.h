#pragma once
// Test fixture: a real Master over a SQLite store in a fresh directory, with a fake clock, that
// a test can stop and start again on the same store (restarts, re-adoption, large searches).

#include <gtest/gtest.h>

#include <filesystem>
#include <future>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/test_dir.h"
#include "master/server/master.h"
#include "master/server/settle_response.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {

// The trial's searcher operation as a poll without wait answers it (on the runtime loop).
inline Result<SearcherOpView> SearcherOp(Master* m, int64_t trial_id) {
  std::promise<Result<SearcherOpView>> answer;
  m->experiments()->GetSearcherOperation(
      trial_id, 0, [&](Result<SearcherOpView> r) { answer.set_value(std::move(r)); });
  return answer.get_future().get();
}

class MasterOverSqliteTest : public ::testing::Test {
 protected:
  explicit MasterOverSqliteTest(const char* dir_prefix) : dir_prefix_(dir_prefix) {}

  void SetUp() override { dir_ = det::testing::FreshTestDir(dir_prefix_); }
  void TearDown() override {
    if (master_) master_->Stop();
    master_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::unique_ptr<store::Store> OpenStore() {
    auto opened = store::SqliteStore::Open((dir_ / "determined.db").string());
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return std::move(opened).value();
  }

  void StartMaster() {
    MasterConfig config;
    config.data_dir = dir_.string();
    ASSERT_TRUE(FinalizeMasterConfig(&config).ok());
    master_ = std::make_unique<Master>(config, OpenStore(), &clock_);
    Status st = master_->Start();
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  void StopMaster() {
    master_->Stop();
    master_.reset();
  }

  // Creates an experiment as the admin; 0 when refused (the failure is recorded).
  int64_t Create(const std::string& yaml) {
    CreateExperimentRequest req;
    req.config_yaml = yaml;
    Principal who;
    who.user_id = 1;
    who.username = "admin";
    who.admin = true;
    auto created = master_->experiments()->CreateExperiment(req, who);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? created->experiment->id : 0;
  }

  const char* dir_prefix_;
  std::filesystem::path dir_;
  FakeClock clock_;
  std::unique_ptr<Master> master_;
};

}  // namespace det::master::server
