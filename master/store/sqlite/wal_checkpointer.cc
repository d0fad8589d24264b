#include "master/store/sqlite/wal_checkpointer.h"

#include <sqlite3.h>

#include <algorithm>
#include <utility>

namespace det::master::store {

constexpr int kSqliteDefaultCheckpointFrames = 1000;  // SQLITE_DEFAULT_WAL_AUTOCHECKPOINT

// sqlite_db.cc: the handle under a SQLite Db (nullptr for any other).
sqlite3* SqliteHandle(Db* db);

int WalCheckpointer::Hook(void* self, sqlite3*, const char*, int frames) {
  static_cast<WalCheckpointer*>(self)->Committed(frames);
  return SQLITE_OK;
}

Result<std::unique_ptr<WalCheckpointer>> WalCheckpointer::Start(Db* writer, const std::string& path,
                                                                WithWriteLock with_write_lock,
                                                                WalCheckpointerOptions options) {
  if (SqliteHandle(writer) == nullptr) {
    return InvalidArgument("WAL checkpointer: the write connection is not SQLite");
  }
  DET_ASSIGN_OR_RETURN(std::unique_ptr<Db> own, OpenSqliteDb(path));
  // A connection learns that the database is in WAL mode when it first reads it; until then a
  // checkpoint on it does nothing.
  DET_RETURN_IF_ERROR(own->Exec("SELECT count(*) FROM sqlite_master"));
  std::unique_ptr<WalCheckpointer> c(
      new WalCheckpointer(writer, std::move(own), std::move(with_write_lock), options));
  // Replaces SQLite's automatic checkpoint, which is a WAL hook too.
  sqlite3_wal_hook(SqliteHandle(writer), &WalCheckpointer::Hook, c.get());
  c->thread_ = std::thread([p = c.get()] { p->Loop(); });
  return c;
}

WalCheckpointer::WalCheckpointer(Db* writer, std::unique_ptr<Db> own,
                                 WithWriteLock with_write_lock, WalCheckpointerOptions options)
    : writer_(writer),
      own_(std::move(own)),
      with_write_lock_(std::move(with_write_lock)),
      options_(options) {}

WalCheckpointer::~WalCheckpointer() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  // SQLite's default again (closing the last connection checkpoints everything anyway).
  sqlite3_wal_autocheckpoint(SqliteHandle(writer_), kSqliteDefaultCheckpointFrames);
}

void WalCheckpointer::Committed(int64_t frames) {
  MutexLock lock(&mu_);
  if (frames < frames_) checkpointed_ = 0;  // the log started over
  frames_ = frames;
  if (frames_ - checkpointed_ >= options_.checkpoint_frames) cv_.notify_one();
}

bool WalCheckpointer::Checkpoint(int64_t* frames) {
  int log = 0;
  int done = 0;
  int rc = sqlite3_wal_checkpoint_v2(SqliteHandle(own_.get()), nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                     &log, &done);
  *frames = log;
  return rc == SQLITE_OK && log >= 0;  // -1: not in WAL mode
}

void WalCheckpointer::Loop() {
  while (true) {
    {
      MutexLock lock(&mu_);
      while (!stopping_ && frames_ - checkpointed_ < options_.checkpoint_frames) cv_.wait(mu_);
      if (stopping_) return;
    }
    int64_t frames = 0;
    bool ok = Checkpoint(&frames);
    bool restart = false;
    if (ok && frames >= options_.restart_frames) {
      // No commit runs meanwhile: every frame is copied, and the next write restarts the log.
      with_write_lock_([&] { ok = Checkpoint(&frames); });
      restart = true;
    }
    MutexLock lock(&mu_);
    if (ok) {
      // A commit after the catch-up may have restarted the log already (frames_ went down).
      checkpointed_ = std::min(frames, frames_);
      stats_.checkpoints += 1;
      if (restart) stats_.catch_ups += 1;
    } else {
      stats_.failures += 1;
      // E.g. the database is busy: try again a little later rather than at once.
      checkpointed_ = frames_;
    }
  }
}

WalCheckpointer::Stats WalCheckpointer::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace det::master::store
