// Migrations: a database that recorded a later version but not an earlier one (a migration
// merged after the database was made) still gets the earlier one on open.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>

#include "master/store/sqlite/sqlite_store.h"

namespace det::master::store {
namespace {

int64_t QueryInt(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
  int64_t v = -1;
  if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

void Exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_close(db);
}

TEST(SqliteMigrate, AppliesAnEarlierVersionMissingBelowTheHighest) {
  auto dir =
      std::filesystem::temp_directory_path() / ("det_migrate_test_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string path = (dir / "det.db").string();
  {
    auto s = SqliteStore::Open(path);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
  }
  const std::string count_models =
      "SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name='models'";
  ASSERT_EQ(QueryInt(path, count_models), 1);
  ASSERT_GT(QueryInt(path, "SELECT MAX(version) FROM schema_migrations"), 7);
  // As if 0007 had not existed when the database was made.
  Exec(path,
       "DROP TABLE model_versions; DROP TABLE models; "
       "DELETE FROM schema_migrations WHERE version = 7");
  ASSERT_EQ(QueryInt(path, count_models), 0);
  {
    auto s = SqliteStore::Open(path);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
  }
  EXPECT_EQ(QueryInt(path, count_models), 1);
  EXPECT_EQ(QueryInt(path, "SELECT COUNT(*) FROM schema_migrations WHERE version = 7"), 1);
  // Opening again applies nothing twice.
  {
    auto s = SqliteStore::Open(path);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace det::master::store
