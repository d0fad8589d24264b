// SqliteOptions::synchronous and ::metrics_synchronous, observed where they act: the syncs SQLite
// asks of the operating system. A VFS around the default one counts xSync calls per file, so the
// test sees that a metric batch commits without a sync by default while every other write still
// syncs, and that metrics_synchronous=full syncs each batch.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/test_rows.h"

namespace det::master::store {
namespace {

std::atomic<int> g_syncs{0};
sqlite3_vfs* g_real = nullptr;

struct CountingFile {
  sqlite3_file base;
  sqlite3_file* real;  // the default VFS's file, allocated right after this struct
};

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<CountingFile*>(f)->real; }

int Close(sqlite3_file* f) { return Real(f)->pMethods->xClose(Real(f)); }
int Read(sqlite3_file* f, void* b, int n, sqlite3_int64 o) {
  return Real(f)->pMethods->xRead(Real(f), b, n, o);
}
int Write(sqlite3_file* f, const void* b, int n, sqlite3_int64 o) {
  return Real(f)->pMethods->xWrite(Real(f), b, n, o);
}
int Truncate(sqlite3_file* f, sqlite3_int64 n) { return Real(f)->pMethods->xTruncate(Real(f), n); }
int Sync(sqlite3_file* f, int flags) {
  g_syncs++;
  return Real(f)->pMethods->xSync(Real(f), flags);
}
int FileSize(sqlite3_file* f, sqlite3_int64* n) {
  return Real(f)->pMethods->xFileSize(Real(f), n);
}
int Lock(sqlite3_file* f, int l) { return Real(f)->pMethods->xLock(Real(f), l); }
int Unlock(sqlite3_file* f, int l) { return Real(f)->pMethods->xUnlock(Real(f), l); }
int CheckReserved(sqlite3_file* f, int* out) {
  return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
}
int FileControl(sqlite3_file* f, int op, void* arg) {
  return Real(f)->pMethods->xFileControl(Real(f), op, arg);
}
int SectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int DeviceCharacteristics(sqlite3_file* f) {
  return Real(f)->pMethods->xDeviceCharacteristics(Real(f));
}
int ShmMap(sqlite3_file* f, int pg, int sz, int extend, void volatile** out) {
  return Real(f)->pMethods->xShmMap(Real(f), pg, sz, extend, out);
}
int ShmLock(sqlite3_file* f, int off, int n, int flags) {
  return Real(f)->pMethods->xShmLock(Real(f), off, n, flags);
}
void ShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
int ShmUnmap(sqlite3_file* f, int del) { return Real(f)->pMethods->xShmUnmap(Real(f), del); }

// Version 2: no memory-mapped fetches, so SQLite reads through xRead.
const sqlite3_io_methods kCountingMethods = {
    2,        Close,       Read,        Write,         Truncate,   Sync,
    FileSize, Lock,        Unlock,      CheckReserved, FileControl, SectorSize,
    DeviceCharacteristics, ShmMap,      ShmLock,       ShmBarrier, ShmUnmap,
    nullptr,  nullptr};

int Open(sqlite3_vfs* vfs, const char* name, sqlite3_file* f, int flags, int* out_flags) {
  auto* file = reinterpret_cast<CountingFile*>(f);
  file->real = reinterpret_cast<sqlite3_file*>(file + 1);
  int rc = g_real->xOpen(g_real, name, file->real, flags, out_flags);
  // SQLite calls xClose only where xOpen set pMethods.
  file->base.pMethods = file->real->pMethods != nullptr ? &kCountingMethods : nullptr;
  (void)vfs;
  return rc;
}

sqlite3_vfs* CountingVfs() {
  static sqlite3_vfs vfs = [] {
    g_real = sqlite3_vfs_find(nullptr);
    sqlite3_vfs v = *g_real;
    v.szOsFile = static_cast<int>(sizeof(CountingFile)) + g_real->szOsFile;
    v.zName = "det-counting";
    v.xOpen = Open;
    return v;
  }();
  return &vfs;
}

class SyncLevelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The default VFS from here on: the store opens its connections with the default.
    ASSERT_EQ(sqlite3_vfs_register(CountingVfs(), /*makeDflt=*/1), SQLITE_OK);
    dir_ = det::testing::FreshTestDir("det_sync_levels_test_");
  }
  void TearDown() override {
    store_.reset();
    sqlite3_vfs_unregister(CountingVfs());
    std::filesystem::remove_all(dir_);
  }

  void OpenStore(SqliteOptions options) {
    // Checkpoints sync too; none may run inside the counted calls.
    options.background_checkpoints = false;
    auto s = SqliteStore::Open((dir_ / "determined.db").string(), options);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
    ASSERT_TRUE(store_->EnsureBuiltinUsers(std::nullopt).ok());
    auto exp = store_test::InsertTestExperiment(store_.get());
    ASSERT_TRUE(exp.ok()) << exp.status().ToString();
    exp_id_ = *exp;
    auto trial = store_test::InsertTestTrial(store_.get(), exp_id_, /*run_id=*/1);
    ASSERT_TRUE(trial.ok()) << trial.status().ToString();
    trial_id_ = *trial;
  }

  // Syncs during one batch of `n` training reports at steps first..first+n-1.
  int SyncsOfMetricBatch(int64_t first, int n) {
    std::vector<MetricRow> rows;
    for (int i = 0; i < n; ++i) {
      MetricRow r;
      r.trial_id = trial_id_;
      r.trial_run_id = 1;
      r.total_batches = first + i;
      r.group = "training";
      r.metrics = {{"avg_metrics", {{"loss", 1.0 / (first + i)}}}};
      rows.push_back(r);
    }
    int before = g_syncs.load();
    for (const Status& st : store_->AddMetricsBatch(rows)) EXPECT_TRUE(st.ok()) << st.ToString();
    return g_syncs.load() - before;
  }

  // Syncs during one state change of the experiment (a write outside the metric writer).
  int SyncsOfStateChange(const std::string& state) {
    int before = g_syncs.load();
    Status st = store_->UpdateExperimentState(exp_id_, state, std::nullopt);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return g_syncs.load() - before;
  }

  std::filesystem::path dir_;
  std::unique_ptr<SqliteStore> store_;
  int64_t exp_id_ = 0;
  int64_t trial_id_ = 0;
};

TEST_F(SyncLevelsTest, ByDefaultMetricBatchesAreNotSyncedAndOtherWritesAre) {
  OpenStore(SqliteOptions{});
  EXPECT_EQ(SyncsOfMetricBatch(1, 50), 0);
  EXPECT_GE(SyncsOfStateChange("PAUSED"), 1);  // the metric batch left the level at FULL
  EXPECT_EQ(SyncsOfMetricBatch(51, 50), 0);
  EXPECT_GE(SyncsOfStateChange("ACTIVE"), 1);
  auto rows = store_->ListMetrics(trial_id_, "training");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->size(), 100u);
}

TEST_F(SyncLevelsTest, MetricsSynchronousFullSyncsEveryBatch) {
  SqliteOptions options;
  options.metrics_synchronous = SqliteOptions::Synchronous::kFull;
  OpenStore(options);
  EXPECT_GE(SyncsOfMetricBatch(1, 50), 1);
  EXPECT_GE(SyncsOfMetricBatch(51, 50), 1);
  EXPECT_GE(SyncsOfStateChange("PAUSED"), 1);
}

TEST_F(SyncLevelsTest, SynchronousNormalSyncsNeither) {
  SqliteOptions options;
  options.synchronous = SqliteOptions::Synchronous::kNormal;
  OpenStore(options);
  EXPECT_EQ(SyncsOfMetricBatch(1, 50), 0);
  EXPECT_EQ(SyncsOfStateChange("PAUSED"), 0);
}

}  // namespace
}  // namespace det::master::store
