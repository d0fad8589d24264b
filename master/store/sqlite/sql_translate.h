#pragma once
// Pure text translations from the Store's SQL (SQLite's spelling) to PostgreSQL's.

#include <string>
#include <string_view>

namespace det::master::store::sql {

// `?` -> `$1, $2, ...` and `?N` -> `$N`, outside quoted strings and identifiers. Sets
// `*params` to the number of parameters (the highest index).
std::string TranslatePlaceholders(std::string_view sql, int* params);

// A migration's DDL in PostgreSQL types: INTEGER PRIMARY KEY AUTOINCREMENT -> BIGSERIAL
// PRIMARY KEY, INTEGER -> BIGINT, REAL -> DOUBLE PRECISION, BLOB -> BYTEA (whole words,
// outside quoted text and comments).
std::string TranslateDdl(std::string_view sql);

}  // namespace det::master::store::sql
