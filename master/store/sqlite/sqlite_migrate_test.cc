// Migrations: a database that recorded a later version but not an earlier one (a migration
// merged after the database was made) still gets the earlier one on open.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>

#include "master/store/session_token.h"
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

// Session tokens are stored as their digest only, and 0022 hashes the rows of an earlier
// version in place, so that a session made before the upgrade still authenticates.
TEST(SqliteMigrate, SessionTokensAreStoredHashed) {
  auto dir = std::filesystem::temp_directory_path() /
             ("det_migrate_tokens_test_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string path = (dir / "det.db").string();
  const std::string digest = SessionTokenDigest("fresh-token");
  ASSERT_EQ(digest.size(), 64u);
  EXPECT_EQ(SessionTokenDigest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  int64_t admin_id = 0;
  {
    auto s = SqliteStore::Open(path);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE((*s)->EnsureBuiltinUsers(std::nullopt).ok());
    auto admin = (*s)->GetUserByName("admin");
    ASSERT_TRUE(admin.ok());
    admin_id = admin->id;
    ASSERT_TRUE((*s)->CreateSession("fresh-token", admin_id, 1000).ok());
    EXPECT_EQ(*(*s)->LookupSession("fresh-token", 10), admin_id);
    EXPECT_FALSE((*s)->LookupSession(digest, 10).ok());  // the digest is no token
  }
  EXPECT_EQ(QueryInt(path, "SELECT COUNT(*) FROM user_sessions WHERE token = 'fresh-token'"), 0);
  EXPECT_EQ(QueryInt(path, "SELECT COUNT(*) FROM user_sessions WHERE token = '" + digest + "'"), 1);
  // A row as an earlier version wrote it (the token itself), and 0022 not yet applied.
  Exec(path,
       "INSERT INTO user_sessions (token, user_id, created_at, expiry) VALUES ('old-token', " +
           std::to_string(admin_id) +
           ", 1, 1000); DELETE FROM schema_migrations WHERE version = 22");
  {
    auto s = SqliteStore::Open(path);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    auto looked_up = (*s)->LookupSession("old-token", 10);
    ASSERT_TRUE(looked_up.ok()) << looked_up.status().ToString();
    EXPECT_EQ(*looked_up, admin_id);
    ASSERT_TRUE((*s)->RevokeSession("old-token").ok());
    EXPECT_FALSE((*s)->LookupSession("old-token", 10).ok());
  }
  EXPECT_EQ(QueryInt(path, "SELECT COUNT(*) FROM user_sessions WHERE token LIKE '%-token'"), 0);
  EXPECT_EQ(QueryInt(path, "SELECT COUNT(*) FROM user_sessions WHERE token = '" +
                               SessionTokenDigest("old-token") + "' AND revoked = 1"),
            1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace det::master::store
