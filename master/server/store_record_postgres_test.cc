// The store record against a real PostgreSQL (a throwaway server, store_backends.h): a database
// without the schema, while the data dir recorded it, is refused; with the schema it is reused.
#include <gtest/gtest.h>

#include "common/test_dir.h"
#include "master/server/store_record.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/store_backends.h"

namespace det::master::server {
namespace {

TEST(StoreRecordPostgres, AnEmptiedDatabaseIsRefusedAndAnInitializedOneReused) {
  std::string why;
  std::string url = store::store_test::PostgresServer::Get().NewDatabase(&why);
  if (url.empty()) GTEST_SKIP() << why;
  auto dir = det::testing::FreshTestDir("det_store_rec_pg_");
  // The first start recorded it; then the database was emptied (here: never initialized).
  auto rec = StoreRecordFor("postgres", url);
  ASSERT_TRUE(rec.ok());
  ASSERT_TRUE(WriteStoreRecord(dir.string(), *rec).ok());
  std::string store = "postgres", conninfo = url;
  auto refused = ReconcileStore(dir.string(), true, &store, &conninfo);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("has no Determined schema"), std::string::npos)
      << refused.status().message();
  // Once the schema is there (the store opened it), the recorded database is reused, also when
  // the start names no store.
  ASSERT_TRUE(store::SqliteStore::OpenPostgres(url).ok());
  auto given = ReconcileStore(dir.string(), true, &store, &conninfo);
  ASSERT_TRUE(given.ok()) << given.status().ToString();
  EXPECT_FALSE(given->has_value());
  std::string s2 = "sqlite", c2 = (dir / "determined.db").string();
  auto reused = ReconcileStore(dir.string(), false, &s2, &c2);
  ASSERT_TRUE(reused.ok()) << reused.status().ToString();
  EXPECT_EQ(s2, "postgres");
  EXPECT_EQ(c2, rec->Conninfo());
}

}  // namespace
}  // namespace det::master::server
