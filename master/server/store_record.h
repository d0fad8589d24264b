#pragma once
// The data dir remembers its store: <data dir>/store.json records, on the first start, whether
// the master keeps its state in SQLite (and which file) or PostgreSQL (host, port, database and
// user: never the password). Later starts that name no store reuse it; a start that names a
// different store, or finds the recorded one emptied (the SQLite file missing or zero-length, a
// PostgreSQL database without the schema), is refused instead of becoming a fresh, empty cluster.

#include <optional>
#include <string>

#include "common/status.h"

namespace det::master::server {

inline constexpr char kStoreRecordFile[] = "store.json";

struct StoreRecord {
  std::string store;        // "sqlite" or "postgres"
  std::string sqlite_path;  // sqlite: the database file (absolute)
  // postgres: where and as whom; the password comes from the configuration, PGPASSWORD or
  // ~/.pgpass, as libpq reads them.
  std::string host, port, dbname, user;

  // "SQLite database /d/determined.db", "PostgreSQL database determined on 127.0.0.1:5432 as
  // user determined".
  std::string Describe() const;
  bool SameStore(const StoreRecord& other) const;
  // A libpq connection string for the recorded PostgreSQL database (no password).
  std::string Conninfo() const;
};

// Whether a master.yaml names the store (db.type, db.path or a PostgreSQL field); when neither it
// nor --store/--db does, the data dir's record decides.
bool ConfigNamesStore(const std::string& yaml_text);

// The record for `store` ("sqlite" or "postgres") at `db_path` (a file, or a libpq conninfo/URI).
Result<StoreRecord> StoreRecordFor(const std::string& store, const std::string& db_path);

// nullopt when the data dir has no record yet.
Result<std::optional<StoreRecord>> ReadStoreRecord(const std::string& data_dir);
// Written whole (temp file and rename), mode 0600.
Status WriteStoreRecord(const std::string& data_dir, const StoreRecord& record);

// Before the store is opened. `store_given`: the flags or the config file named the store; when
// not, a recorded store replaces `*store` and `*db_path`. Refuses a store other than the
// recorded one and a recorded store found emptied, naming both; refuses a zero-length SQLite
// file even without a record. Returns the record to write after the first successful open
// (nullopt when the data dir already has one).
Result<std::optional<StoreRecord>> ReconcileStore(const std::string& data_dir, bool store_given,
                                                  std::string* store, std::string* db_path);

}  // namespace det::master::server
