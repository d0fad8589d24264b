// SqliteDb's statement pool: a statement used again comes back reset (no bound value, no open
// read), and statements of one SQL text used at once are distinct.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "master/store/sqlite/db.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {
namespace {

class SqliteDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() /
        ("det-sqlite-db-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto db = OpenSqliteDb((dir_ / "t.db").string());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    ASSERT_TRUE(db_->Exec("PRAGMA journal_mode=WAL").ok());
    ASSERT_TRUE(db_->Exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)").ok());
  }
  void TearDown() override {
    db_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  std::unique_ptr<Db> db_;
};

constexpr const char* kInsert = "INSERT INTO t (k, v) VALUES (?, ?)";
constexpr const char* kSelect = "SELECT v FROM t WHERE k = ?";

TEST_F(SqliteDbTest, ReusedStatementComesBackWithoutBindings) {
  {
    Statement s(db_.get(), kInsert);
    ASSERT_TRUE(s.prepared().ok());
    ASSERT_TRUE(s.Bind(1, int64_t{1}).Bind(2, std::string("one")).Run().ok());
  }
  {
    // The pooled statement: its old values are gone, so an unbound k inserts NULL (a new rowid)
    // and v is NULL rather than "one".
    Statement s(db_.get(), kInsert);
    ASSERT_TRUE(s.prepared().ok());
    ASSERT_TRUE(s.Run().ok());
  }
  Statement count(db_.get(), "SELECT COUNT(*), COUNT(v) FROM t");
  ASSERT_TRUE(count.prepared().ok());
  auto row = count.Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(count.Int(0), 2);
  EXPECT_EQ(count.Int(1), 1);
}

TEST_F(SqliteDbTest, StatementLeftMidReadHoldsNoTransaction) {
  for (int64_t k = 1; k <= 3; ++k) {
    Statement s(db_.get(), kInsert);
    ASSERT_TRUE(s.Bind(1, k).Bind(2, std::string("v") + std::to_string(k)).Run().ok());
  }
  {
    Statement scan(db_.get(), "SELECT k FROM t ORDER BY k");
    auto row = scan.Step();
    ASSERT_TRUE(row.ok() && *row);  // one row read, two left: pooled mid-read
  }
  // A write transaction starts and commits, and the same SELECT text reads from the first row
  // again (a pooled statement not reset would go on from its second row).
  ASSERT_TRUE(db_->Exec("BEGIN IMMEDIATE").ok());
  {
    Statement s(db_.get(), kInsert);
    ASSERT_TRUE(s.Bind(1, int64_t{4}).Bind(2, std::string("v4")).Run().ok());
  }
  ASSERT_TRUE(db_->Exec("COMMIT").ok());
  Statement scan(db_.get(), "SELECT k FROM t ORDER BY k");
  std::vector<int64_t> keys;
  while (true) {
    auto row = scan.Step();
    ASSERT_TRUE(row.ok());
    if (!*row) break;
    keys.push_back(scan.Int(0));
  }
  EXPECT_EQ(keys, (std::vector<int64_t>{1, 2, 3, 4}));  // read from the start again
}

TEST_F(SqliteDbTest, SameTextUsedTwiceAtOnceGivesTwoStatements) {
  for (int64_t k = 1; k <= 2; ++k) {
    Statement s(db_.get(), kInsert);
    ASSERT_TRUE(s.Bind(1, k).Bind(2, std::string("v") + std::to_string(k)).Run().ok());
  }
  Statement a(db_.get(), kSelect);
  Statement b(db_.get(), kSelect);
  a.Bind(1, int64_t{1});
  b.Bind(1, int64_t{2});
  auto ra = a.Step();
  auto rb = b.Step();
  ASSERT_TRUE(ra.ok() && *ra);
  ASSERT_TRUE(rb.ok() && *rb);
  EXPECT_EQ(a.Text(0), "v1");
  EXPECT_EQ(b.Text(0), "v2");
}

TEST_F(SqliteDbTest, ManyDistinctTextsStayCorrect) {
  // More distinct SQL texts than the pool keeps: it starts over and every statement still runs.
  for (int i = 0; i < 600; ++i) {
    Statement s(db_.get(), "SELECT " + std::to_string(i));
    ASSERT_TRUE(s.prepared().ok());
    auto row = s.Step();
    ASSERT_TRUE(row.ok() && *row);
    EXPECT_EQ(s.Int(0), i);
  }
  Statement again(db_.get(), "SELECT 7");
  auto row = again.Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(again.Int(0), 7);
}

TEST_F(SqliteDbTest, FailedPrepareIsReportedEachTime) {
  for (int i = 0; i < 2; ++i) {
    Statement s(db_.get(), "SELECT nope FROM missing_table");
    EXPECT_FALSE(s.prepared().ok());
  }
}

}  // namespace
}  // namespace det::master::store
