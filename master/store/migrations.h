#pragma once
// Numbered SQL migrations, embedded in the binary from master/store/migrations/*.sql.

#include <string>
#include <vector>

namespace det::master::store {

struct Migration {
  int version;
  const char* name;
  const char* sql;
};

const std::vector<Migration>& Migrations();

}  // namespace det::master::store
