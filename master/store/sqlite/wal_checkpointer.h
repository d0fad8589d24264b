#pragma once
// WalCheckpointer: SQLite's WAL checkpoints on a thread and connection of their own, so that no
// commit pays for one. By default SQLite checkpoints inside the COMMIT that grows the log past
// 1,000 pages: that commit, every metric report of its batch and every writer queued behind the
// store's lock wait while ~4 MB of pages are copied into the database file and both files are
// synced (measured: the tail of the 10 Hz report latency, issue #13).
//
// Here the write connection's WAL hook only records the log's size and wakes the thread, which
// checkpoints PASSIVE on its own connection: that blocks neither the writer nor readers. While
// writes keep coming, frames arrive during each checkpoint and the log cannot start over from its
// beginning; so once it holds `restart_frames`, the thread takes the store's write lock for a
// short catch-up checkpoint of the frames written meanwhile, and the next write restarts the log.
// Durability is SQLite's own: a checkpoint syncs the log before copying it and the database file
// after.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "common/status.h"
#include "common/thread_annotations.h"
#include "master/store/sqlite/db.h"

struct sqlite3;

namespace det::master::store {

struct WalCheckpointerOptions {
  // A checkpoint runs once this many frames (pages) were written since the last one (SQLite's
  // default automatic checkpoint, about 4 MB).
  int64_t checkpoint_frames = 1000;
  // A log this long is caught up under the write lock so that it restarts (about 32 MB).
  int64_t restart_frames = 8000;
};

class WalCheckpointer {
 public:
  // Runs `fn` with the store's write lock held (no transaction open on the write connection).
  using WithWriteLock = std::function<void(const std::function<void()>& fn)>;

  struct Stats {
    int64_t checkpoints = 0;  // passive checkpoints run beside the writer
    int64_t catch_ups = 0;    // short checkpoints under the write lock
    int64_t failures = 0;     // checkpoints SQLite refused (retried on the next wake-up)
  };

  // Takes over `writer`'s checkpoints (a SQLite connection to the database file at `path`, in WAL
  // mode): its automatic checkpoints stop and a thread with its own connection runs them.
  // `writer` must outlive the checkpointer.
  static Result<std::unique_ptr<WalCheckpointer>> Start(Db* writer, const std::string& path,
                                                        WithWriteLock with_write_lock,
                                                        WalCheckpointerOptions options = {});
  // Ends the thread and gives the writer its automatic checkpoints back.
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  Stats stats() const EXCLUDES(mu_);

 private:
  WalCheckpointer(Db* writer, std::unique_ptr<Db> own, WithWriteLock with_write_lock,
                  WalCheckpointerOptions options);
  // The WAL hook: runs on the writer's thread after each commit, with the log's frame count.
  static int Hook(void* self, sqlite3* db, const char* name, int frames);
  void Committed(int64_t frames) EXCLUDES(mu_);
  void Loop() EXCLUDES(mu_);
  // A PASSIVE checkpoint on the own connection; `*frames` gets the log's size. False on failure.
  bool Checkpoint(int64_t* frames);

  Db* const writer_;
  const std::unique_ptr<Db> own_;  // used only by the thread
  const WithWriteLock with_write_lock_;
  const WalCheckpointerOptions options_;
  mutable Mutex mu_;
  std::condition_variable_any cv_;
  int64_t frames_ GUARDED_BY(mu_) = 0;        // the log's size after the latest commit
  int64_t checkpointed_ GUARDED_BY(mu_) = 0;  // the log's size at the latest checkpoint
  bool stopping_ GUARDED_BY(mu_) = false;
  Stats stats_ GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace det::master::store
