#pragma once
// Numbered SQL migrations, embedded in the binary from master/store/migrations/*.sql.

#include <string>
#include <vector>

namespace det::master::store {

struct Migration {
  int version;
  const char* name;
  const char* sql;
  // PostgreSQL's own text (migrations/NNNN_name.postgres.sql) where translating `sql`'s types
  // is not enough; nullptr: run sql::TranslateDdl(sql).
  const char* postgres_sql;
};

const std::vector<Migration>& Migrations();

}  // namespace det::master::store
