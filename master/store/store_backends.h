#pragma once
// Test helper: run a Store test against each backend. SQLite opens a file in the test's own
// directory; PostgreSQL gets a fresh database per test on one throwaway server per test binary,
// started on first use by tools/postgres/det-postgres and stopped when the binary ends. Tests
// instantiate twice, as Sqlite/... and Postgres/... (ctest runs all Postgres/ cases in one
// process, so the server starts once); Postgres cases skip, saying why, only when the PostgreSQL
// server binaries are missing.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::store::store_test {

enum class Backend { kSqlite, kPostgres };

inline std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqlite ? "sqlite" : "postgres";
}

class PostgresServer {
 public:
  static PostgresServer& Get() {
    static PostgresServer* server = new PostgresServer();
    return *server;
  }
  // The admin URL (database `determined`), starting the server on first use; empty with
  // `*why` set when it cannot run.
  std::string Url(std::string* why) {
    if (!started_) Start();
    *why = why_;
    return url_;
  }
  void Stop() {
    if (dir_.empty()) return;
    std::string cmd = std::string(DET_POSTGRES_SCRIPT) + " stop '" + dir_ + "' >/dev/null 2>&1";
    (void)std::system(cmd.c_str());
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    dir_.clear();
  }
  // A URL of a new, empty database.
  std::string NewDatabase(std::string* why) {
    std::string admin = Url(why);
    if (admin.empty()) return "";
    std::string name = "t" + std::to_string(::getpid()) + "_" + std::to_string(next_++);
    auto db = OpenPostgresDb(admin);
    if (!db.ok()) {
      *why = db.status().ToString();
      return "";
    }
    Status st = (*db)->Exec("CREATE DATABASE " + name);
    if (!st.ok()) {
      *why = st.ToString();
      return "";
    }
    return admin.substr(0, admin.rfind('/') + 1) + name;
  }

 private:
  void Start() {
    started_ = true;
    char tmpl[] = "/tmp/det_store_pg_XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      why_ = "cannot make a temp dir";
      return;
    }
    dir_ = tmpl;
    std::string cmd = std::string(DET_POSTGRES_SCRIPT) + " start '" + dir_ + "' --no-fsync 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[512];
    while (p && fgets(buf, sizeof(buf), p)) out += buf;
    int rc = p ? pclose(p) : -1;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    if (rc != 0) {
      why_ = WIFEXITED(rc) && WEXITSTATUS(rc) == 3
                 ? "PostgreSQL server binaries not installed: " + out
                 : "det-postgres start failed: " + out;
      url_.clear();
      return;
    }
    url_ = out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
  }

  bool started_ = false;
  std::string dir_;
  std::string url_;
  std::string why_;
  std::atomic<int> next_{0};
};

// Stops the server when the test binary ends.
class PostgresEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { PostgresServer::Get().Stop(); }
};
inline ::testing::Environment* const kPostgresEnvironment =
    ::testing::AddGlobalTestEnvironment(new PostgresEnvironment);

// Where a test's store lives: a SQLite file in `dir` or a PostgreSQL database made on Create.
class TestStoreLocation {
 public:
  TestStoreLocation(Backend backend, std::filesystem::path dir)
      : backend_(backend), dir_(std::move(dir)) {}
  // Makes the location (a fresh PostgreSQL database); GTEST_SKIP's reason when unavailable.
  bool Create(std::string* why) {
    if (backend_ == Backend::kSqlite) return true;
    url_ = PostgresServer::Get().NewDatabase(why);
    return !url_.empty();
  }
  Result<std::unique_ptr<SqliteStore>> Open() const {
    if (backend_ == Backend::kSqlite) return SqliteStore::Open((dir_ / "det.db").string());
    return SqliteStore::OpenPostgres(url_);
  }
  // A bare connection to the same database (for tests that edit rows behind the store).
  Result<std::unique_ptr<Db>> OpenDb() const {
    if (backend_ == Backend::kSqlite) return OpenSqliteDb((dir_ / "det.db").string());
    return OpenPostgresDb(url_);
  }
  const std::string& url() const { return url_; }
  Backend backend() const { return backend_; }

 private:
  Backend backend_;
  std::filesystem::path dir_;
  std::string url_;
};

}  // namespace det::master::store::store_test

// In a fixture's SetUp: makes `loc`; skips the test when the PostgreSQL server binaries are
// missing, fails it when the server or database could not be made otherwise.
#define DET_CREATE_STORE_LOCATION_OR_SKIP(loc)                                  \
  do {                                                                          \
    std::string det_why_;                                                       \
    if (!(loc).Create(&det_why_)) {                                             \
      if (det_why_.rfind("PostgreSQL server binaries not installed", 0) == 0) { \
        GTEST_SKIP() << det_why_;                                               \
      }                                                                         \
      FAIL() << det_why_;                                                       \
    }                                                                           \
  } while (0)

namespace det::master::store::store_test {

// A fixture over one backend's fresh store with the built-in users. A derived fixture passes
// its temp dir prefix, and its SetUp calls StoreTest::SetUp() first and returns when that
// skipped or failed (IsSkipped() || HasFatalFailure()).
class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  explicit StoreTest(std::string dir_prefix) : dir_prefix_(std::move(dir_prefix)) {}
  void SetUp() override {
    dir_ = det::testing::FreshTestDir(dir_prefix_);
    loc_ = std::make_unique<TestStoreLocation>(GetParam(), dir_);
    DET_CREATE_STORE_LOCATION_OR_SKIP(*loc_);
    auto s = loc_->Open();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
    ASSERT_TRUE(store_->EnsureBuiltinUsers(std::nullopt).ok());
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  std::unique_ptr<TestStoreLocation> loc_;
  std::unique_ptr<SqliteStore> store_;

 private:
  std::string dir_prefix_;
};

}  // namespace det::master::store::store_test

// Runs the fixture's TEST_Ps on SQLite (Sqlite/...) and on PostgreSQL (Postgres/...).
#define DET_STORE_BACKENDS(fixture)                                                               \
  INSTANTIATE_TEST_SUITE_P(Sqlite, fixture,                                                       \
                           ::testing::Values(::det::master::store::store_test::Backend::kSqlite), \
                           ::det::master::store::store_test::BackendName);                        \
  INSTANTIATE_TEST_SUITE_P(                                                                       \
      Postgres, fixture, ::testing::Values(::det::master::store::store_test::Backend::kPostgres), \
      ::det::master::store::store_test::BackendName)
