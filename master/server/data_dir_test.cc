// The data dir remembers its store (store_record.h); common/data_dir_lock_test.cc covers its lock.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/test_dir.h"
#include "master/server/store_record.h"

namespace det::master::server {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(StoreRecord, TheFirstStartRecordsTheStoreAndLaterStartsReuseIt) {
  fs::path dir = det::testing::FreshTestDir("det_store_rec_");
  std::string store = "sqlite", path = (dir / "determined.db").string();
  auto first = ReconcileStore(dir.string(), false, &store, &path);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(first->has_value());
  std::ofstream(path) << "SQLite format 3";  // what the open would leave
  ASSERT_TRUE(WriteStoreRecord(dir.string(), **first).ok());
  EXPECT_NE(ReadAll(dir / kStoreRecordFile).find("\"store\": \"sqlite\""), std::string::npos);
  // A later start naming no store (whatever the defaults say) gets the recorded one.
  std::string store2 = "sqlite", path2 = (dir / "elsewhere.db").string();
  auto again = ReconcileStore(dir.string(), false, &store2, &path2);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->has_value());
  EXPECT_EQ(path2, fs::weakly_canonical(path).string());
}

TEST(StoreRecord, ARecordNeverHoldsThePostgresPassword) {
  fs::path dir = det::testing::FreshTestDir("det_store_rec_");
  auto rec = StoreRecordFor("postgres", "postgres://det:s3cret-pw@db.local:5433/cluster");
  ASSERT_TRUE(rec.ok()) << rec.status().ToString();
  EXPECT_EQ(rec->host, "db.local");
  EXPECT_EQ(rec->port, "5433");
  EXPECT_EQ(rec->dbname, "cluster");
  EXPECT_EQ(rec->user, "det");
  ASSERT_TRUE(WriteStoreRecord(dir.string(), *rec).ok());
  std::string text = ReadAll(dir / kStoreRecordFile);
  EXPECT_EQ(text.find("s3cret"), std::string::npos) << text;
  EXPECT_EQ(text.find("password"), std::string::npos) << text;
  EXPECT_EQ(rec->Conninfo(), "host='db.local' port='5433' dbname='cluster' user='det'");
  // The key=value form gives the same record.
  auto kv = StoreRecordFor("postgres", "host=db.local port=5433 dbname=cluster user=det "
                                       "password=other");
  ASSERT_TRUE(kv.ok());
  EXPECT_TRUE(rec->SameStore(*kv));
}

TEST(StoreRecord, AStartNamingAnotherStoreIsRefusedNamingBoth) {
  fs::path dir = det::testing::FreshTestDir("det_store_rec_");
  auto pg = StoreRecordFor("postgres", "postgres://det@db.local:5433/cluster");
  ASSERT_TRUE(pg.ok());
  ASSERT_TRUE(WriteStoreRecord(dir.string(), *pg).ok());
  std::string store = "sqlite", path = (dir / "determined.db").string();
  auto r = ReconcileStore(dir.string(), true, &store, &path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  const std::string msg = r.status().message();
  EXPECT_NE(msg.find("PostgreSQL database cluster on db.local:5433 as user det"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("SQLite database " + path), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(path));  // nothing was created
  // Another PostgreSQL database is refused the same way.
  std::string pstore = "postgres", other = "postgres://det@db.local:5433/another";
  auto r2 = ReconcileStore(dir.string(), true, &pstore, &other);
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.status().message().find("PostgreSQL database another"), std::string::npos);
}

TEST(StoreRecord, AnEmptiedSqliteStoreIsRefused) {
  fs::path dir = det::testing::FreshTestDir("det_store_rec_");
  std::string db = (dir / "determined.db").string();
  auto rec = StoreRecordFor("sqlite", db);
  ASSERT_TRUE(rec.ok());
  ASSERT_TRUE(WriteStoreRecord(dir.string(), *rec).ok());
  // Missing while the record says it existed.
  std::string store = "sqlite", path = db;
  auto missing = ReconcileStore(dir.string(), false, &store, &path);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("that file is missing"), std::string::npos)
      << missing.status().message();
  // Zero-length.
  std::ofstream(db).close();
  auto empty = ReconcileStore(dir.string(), false, &store, &path);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("is empty (zero bytes)"), std::string::npos)
      << empty.status().message();
}

TEST(StoreRecord, AZeroLengthSqliteFileIsRefusedEvenWithoutARecord) {
  fs::path dir = det::testing::FreshTestDir("det_store_rec_");
  std::string store = "sqlite", path = (dir / "determined.db").string();
  std::ofstream(path).close();
  auto r = ReconcileStore(dir.string(), false, &store, &path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("is empty (zero bytes)"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / kStoreRecordFile));
}

TEST(StoreRecord, OnlyConfigFieldsThatNameAStoreCountAsGivingOne) {
  EXPECT_FALSE(ConfigNamesStore("port: 8080\n"));
  EXPECT_FALSE(ConfigNamesStore("db:\n  synchronous: normal\n"));
  EXPECT_TRUE(ConfigNamesStore("db:\n  type: sqlite\n"));
  EXPECT_TRUE(ConfigNamesStore("db:\n  host: 127.0.0.1\n"));
}

}  // namespace
}  // namespace det::master::server
