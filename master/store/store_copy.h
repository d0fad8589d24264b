#pragma once
// Copies a whole installation from one database to another (determined-master migrate-store):
// every table, ids preserved, id sequences moved past the copied rows.

#include <cstdint>
#include <map>
#include <string>

#include "common/status.h"
#include "master/store/sqlite/db.h"

namespace det::master::store {

struct CopyReport {
  std::map<std::string, int64_t> rows;  // table -> rows copied
};

// Both databases must already be at the latest migration (open each once as a SqliteStore).
// `to` must be PostgreSQL and hold no users or experiments yet; its rows made by the
// migrations (the default workspace and project) are replaced by `from`'s. One transaction:
// on error nothing is left in `to`.
Result<CopyReport> CopyStoreTables(Db* from, Db* to);

}  // namespace det::master::store
