// The dialect helpers of db.h.
#include <string>

#include "master/store/sqlite/db.h"

namespace det::master::store::sql {
namespace {

std::string SqlitePath(std::initializer_list<std::string_view> keys) {
  std::string out = "'$";
  for (std::string_view k : keys) out += "." + std::string(k);
  return out + "'";
}

std::string PgPath(std::initializer_list<std::string_view> keys) {
  std::string out = "'{";
  bool first = true;
  for (std::string_view k : keys) {
    if (!first) out += ",";
    first = false;
    out += k;
  }
  return out + "}'";
}

}  // namespace

std::string Greatest(Dialect d, std::string_view a, std::string_view b) {
  return std::string(d == Dialect::kSqlite ? "MAX(" : "GREATEST(") + std::string(a) + ", " +
         std::string(b) + ")";
}

std::string JsonText(Dialect d, std::string_view doc,
                     std::initializer_list<std::string_view> keys) {
  if (d == Dialect::kSqlite)
    return "json_extract(" + std::string(doc) + ", " + SqlitePath(keys) + ")";
  return "((" + std::string(doc) + ")::jsonb #>> " + PgPath(keys) + ")";
}

std::string JsonNumber(Dialect d, std::string_view doc,
                       std::initializer_list<std::string_view> keys) {
  if (d == Dialect::kSqlite)
    return "json_extract(" + std::string(doc) + ", " + SqlitePath(keys) + ")";
  return "det_json_number(" + std::string(doc) + ", " + PgPath(keys) + ")";
}

std::string JsonTruth(Dialect d, std::string_view doc, std::initializer_list<std::string_view> keys,
                      int fallback) {
  const std::string f = std::to_string(fallback);
  if (d == Dialect::kSqlite) {
    return "COALESCE(json_extract(" + std::string(doc) + ", " + SqlitePath(keys) + "), " + f + ")";
  }
  return "COALESCE(det_json_truth(" + std::string(doc) + ", " + PgPath(keys) + "), " + f + ")";
}

std::string JsonNumberAtParam(Dialect d, std::string_view doc, std::string_view param) {
  if (d == Dialect::kSqlite)
    return "json_extract(" + std::string(doc) + ", " + std::string(param) + ")";
  return "det_json_number(" + std::string(doc) + ", CAST(" + std::string(param) + " AS text[]))";
}

std::string JsonPathParam(Dialect d, std::initializer_list<std::string_view> keys) {
  std::string out = d == Dialect::kSqlite ? "$" : "{";
  bool first = true;
  for (std::string_view k : keys) {
    std::string quoted;
    for (char c : k) {
      if (c == '"' || c == '\\') quoted += '\\';
      quoted += c;
    }
    if (d == Dialect::kSqlite) {
      out += ".\"" + quoted + "\"";
    } else {
      out += std::string(first ? "" : ",") + "\"" + quoted + "\"";
    }
    first = false;
  }
  return d == Dialect::kSqlite ? out : out + "}";
}

std::string JsonArrayHasParam(Dialect d, std::string_view doc, std::string_view key) {
  if (d == Dialect::kSqlite) {
    return "EXISTS (SELECT 1 FROM json_each(" + std::string(doc) + ", '$." + std::string(key) +
           "') WHERE value = ?)";
  }
  return "(COALESCE((" + std::string(doc) + ")::jsonb -> '" + std::string(key) +
         "', '[]'::jsonb) @> jsonb_build_array(CAST(? AS text)))";
}

std::string JsonArrayParamElements(Dialect d) {
  if (d == Dialect::kSqlite) return "SELECT value FROM json_each(?)";
  return "SELECT jsonb_array_elements_text(CAST(? AS jsonb))";
}

std::string JsonPatch(Dialect d, std::string_view doc, std::string_view patch) {
  if (d == Dialect::kSqlite) {
    return "json_patch(" + std::string(doc) + ", " + std::string(patch) + ")";
  }
  return "det_json_patch((" + std::string(doc) + ")::jsonb, (" + std::string(patch) +
         ")::jsonb)::text";
}

std::string Contains(Dialect d, std::string_view haystack, std::string_view needle) {
  return std::string(d == Dialect::kSqlite ? "instr(" : "strpos(") + std::string(haystack) + ", " +
         std::string(needle) + ") > 0";
}

std::string IdOrNext(Dialect d, std::string_view table) {
  if (d == Dialect::kSqlite) return "?";
  return "COALESCE(CAST(? AS bigint), nextval(pg_get_serial_sequence('" + std::string(table) +
         "', 'id')))";
}

}  // namespace det::master::store::sql
