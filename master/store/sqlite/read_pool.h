#pragma once
// ReadPool: connections the Store's read-only methods run on, so that a read never waits behind
// the write connection's transaction. On SQLite (WAL) a reader sees the last commit while one
// writer works beside it; on PostgreSQL each connection is its own session. Connections open on
// first need, up to a maximum; a lease hands one to one caller at a time and returns it when it
// goes out of scope.

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "common/status.h"
#include "master/store/sqlite/db.h"

namespace det::master::store {

class ReadPool {
 public:
  using Opener = std::function<Result<std::unique_ptr<Db>>()>;

  // `max_connections` >= 1.
  ReadPool(Opener open, size_t max_connections);
  ReadPool(const ReadPool&) = delete;
  ReadPool& operator=(const ReadPool&) = delete;

  class Lease {
   public:
    Lease(Lease&& other) noexcept : pool_(other.pool_), conn_(std::move(other.conn_)) {
      other.pool_ = nullptr;
    }
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (pool_ != nullptr && conn_ != nullptr) pool_->Return(std::move(conn_));
    }
    Db* db() const { return conn_.get(); }

   private:
    friend class ReadPool;
    Lease(ReadPool* pool, std::unique_ptr<Db> conn) : pool_(pool), conn_(std::move(conn)) {}
    ReadPool* pool_;
    std::unique_ptr<Db> conn_;
  };

  // A free connection; opens one when none is free and fewer than the maximum exist, else waits
  // for one to be returned. An error when a connection cannot be opened.
  Result<Lease> Acquire();

  // Connections opened so far (for tests).
  size_t opened() const;

 private:
  void Return(std::unique_ptr<Db> conn);

  Opener open_;
  const size_t max_;
  mutable std::mutex mu_;
  std::condition_variable returned_;
  std::vector<std::unique_ptr<Db>> free_;
  size_t opened_ = 0;
};

}  // namespace det::master::store
