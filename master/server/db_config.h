#pragma once
// The master's database settings: which store to open and how to reach PostgreSQL. Determined's
// names: `db: {host, port, name, user, password, ssl_mode}` in master.yaml, or a URL given with
// `--db` (postgres://user:pass@host:port/name, or sqlite:PATH).

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace det::master::server {

struct DbTarget {
  std::string store;     // "sqlite" or "postgres"
  std::string path;      // sqlite: the file ("" keeps the default under the data dir)
  std::string conninfo;  // postgres: a libpq connection string or URI
};

// `db` from master.yaml: PostgreSQL when any of host, port, name, user, password or ssl_mode is
// set (defaults as Determined's: localhost, 5432, determined, postgres, "", disable).
// Returns store "" when the mapping names no PostgreSQL field.
Result<DbTarget> PostgresTargetFromYaml(const nlohmann::json& db);

// `--db` / `--from` / `--to`: postgres://... or postgresql://... (passed to libpq as is), or
// sqlite:PATH.
Result<DbTarget> ParseDbUrl(const std::string& url);

// `conninfo` with its password replaced by "********" (URI or key=value form), for display.
std::string RedactDbPassword(const std::string& conninfo);

}  // namespace det::master::server
