// SqliteStore: the connections read-only methods run on (read_pool.h).
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {

void SqliteStore::StartReaders(ReadPool::Opener open) {
  readers_ = std::make_unique<ReadPool>(std::move(open), kMaxReadConnections);
}

SqliteStore::Reader SqliteStore::Read() {
  Reader r;
  if (readers_ != nullptr) {
    Result<ReadPool::Lease> lease = readers_->Acquire();
    if (lease.ok()) {
      r.lease_.emplace(std::move(lease).value());
      r.db_ = r.lease_->db();
      return r;
    }
    // Reads still work, only not beside a write (e.g. PostgreSQL's connection limit reached);
    // the next read tries to open a read connection again.
  }
  r.writer_lock_ = std::unique_lock<std::mutex>(mu_);
  r.db_ = db_;
  return r;
}

Status SqliteStore::WhileWriteTransactionOpenForTest(const std::function<void()>& while_open) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  Status st;
  {
    // A change the readers must not see: every experiment's notes.
    Statement s(db_, "UPDATE experiments SET notes = 'uncommitted'");
    st = s.prepared();
    if (st.ok()) st = s.Run();
  }
  if (st.ok()) while_open();
  (void)Exec("ROLLBACK");
  return st;
}

}  // namespace det::master::store
