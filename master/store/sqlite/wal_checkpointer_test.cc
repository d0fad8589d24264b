// WalCheckpointer: the write connection no longer checkpoints in its commits; the thread does,
// and a log that keeps growing is caught up under the write lock so that it starts over.
#include "master/store/sqlite/wal_checkpointer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

#include "master/store/sqlite/db.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {
namespace {

class WalCheckpointerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("det-wal-checkpointer-test-" +
            std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto db = OpenSqliteDb(path());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    ASSERT_TRUE(db_->Exec("PRAGMA journal_mode=WAL").ok());
    ASSERT_TRUE(db_->Exec("PRAGMA synchronous=NORMAL").ok());  // no sync per commit: fast
    ASSERT_TRUE(db_->Exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)").ok());
  }
  void TearDown() override {
    db_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string path() const { return (dir_ / "t.db").string(); }
  int64_t WalBytes() const {
    std::error_code ec;
    auto n = std::filesystem::file_size(dir_ / "t.db-wal", ec);
    return ec ? 0 : static_cast<int64_t>(n);
  }
  WalCheckpointer::WithWriteLock Lock() {
    return [this](const std::function<void()>& fn) {
      std::lock_guard<std::mutex> lock(mu_);
      fn();
    };
  }
  // `n` transactions of one ~4 KB row each (about one page apiece in the log).
  void Write(int n) {
    const std::string value(4000, 'x');
    for (int i = 0; i < n; ++i) {
      std::lock_guard<std::mutex> lock(mu_);
      ASSERT_TRUE(db_->Exec("BEGIN IMMEDIATE").ok());
      Statement s(db_.get(), "INSERT INTO t (k, v) VALUES (?, ?)");
      ASSERT_TRUE(s.Bind(1, next_++).Bind(2, value).Run().ok());
      ASSERT_TRUE(db_->Exec("COMMIT").ok());
    }
  }
  // Polls `done` for up to 30 s.
  template <typename F>
  bool Eventually(F done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  std::filesystem::path dir_;
  std::unique_ptr<Db> db_;
  std::mutex mu_;
  int64_t next_ = 1;
};

TEST_F(WalCheckpointerTest, CommitsNoLongerCheckpoint) {
  // The thread's threshold is out of reach: only an automatic checkpoint could shrink the log.
  auto c = WalCheckpointer::Start(db_.get(), path(), Lock(),
                                  {.checkpoint_frames = 1 << 30, .restart_frames = 1 << 30});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Write(1500);  // past SQLite's automatic checkpoint at 1,000 pages
  // Without a checkpoint the log never starts over: it holds every page written.
  EXPECT_GT(WalBytes(), 1400 * 4096);
  EXPECT_EQ((*c)->stats().checkpoints, 0);
}

TEST_F(WalCheckpointerTest, ThreadCheckpointsAndTheLogStartsOver) {
  auto c = WalCheckpointer::Start(db_.get(), path(), Lock(),
                                  {.checkpoint_frames = 50, .restart_frames = 200});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  // Writes keep coming while the thread checkpoints; the log stays near restart_frames instead
  // of growing with every page written.
  for (int round = 0; round < 20; ++round) {
    const int64_t before = (*c)->stats().checkpoints;
    Write(100);  // more than checkpoint_frames: the thread checkpoints
    ASSERT_TRUE(Eventually([&] { return (*c)->stats().checkpoints > before; }));
  }
  EXPECT_GT((*c)->stats().catch_ups, 0);
  EXPECT_GT((*c)->stats().checkpoints, 0);
  // A passive checkpoint may meet SQLITE_BUSY while the writer restarts the log (seen on a
  // loaded machine); it is retried on the next wake-up, so a few are allowed, never most.
  EXPECT_LT((*c)->stats().failures, (*c)->stats().checkpoints);
  EXPECT_LT(WalBytes(), 1000 * 4096) << "2,000 pages written";
  // Every row is there, read through the writer.
  Statement count(db_.get(), "SELECT COUNT(*) FROM t");
  ASSERT_TRUE(count.Step().value());
  EXPECT_EQ(count.Int(0), 2000);
}

TEST_F(WalCheckpointerTest, StopsAndGivesAutomaticCheckpointsBack) {
  {
    auto c = WalCheckpointer::Start(db_.get(), path(), Lock(),
                                    {.checkpoint_frames = 1 << 30, .restart_frames = 1 << 30});
    ASSERT_TRUE(c.ok()) << c.status().ToString();
  }
  Write(2500);
  // SQLite's own checkpoints at 1,000 pages restart the log again.
  EXPECT_LT(WalBytes(), 2000 * 4096);
}

}  // namespace
}  // namespace det::master::store
