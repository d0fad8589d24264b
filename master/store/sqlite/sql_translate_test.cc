#include "master/store/sqlite/sql_translate.h"

#include <gtest/gtest.h>

namespace det::master::store::sql {
namespace {

TEST(TranslatePlaceholders, NumbersBareAndNumberedOutsideQuotes) {
  int n = 0;
  EXPECT_EQ(TranslatePlaceholders("SELECT a FROM t WHERE b = ? AND c = '?' AND d = ?", &n),
            "SELECT a FROM t WHERE b = $1 AND c = '?' AND d = $2");
  EXPECT_EQ(n, 2);
  EXPECT_EQ(TranslatePlaceholders("x = ?1 OR y = ?1 OR z = ?", &n), "x = $1 OR y = $1 OR z = $2");
  EXPECT_EQ(n, 2);
  EXPECT_EQ(TranslatePlaceholders("SELECT \"a?\" -- ?\nFROM t", &n), "SELECT \"a?\" -- ?\nFROM t");
  EXPECT_EQ(n, 0);
  EXPECT_EQ(TranslatePlaceholders("'it''s ?' || ?", &n), "'it''s ?' || $1");
  EXPECT_EQ(n, 1);
}

TEST(TranslateDdl, MapsTypesAsWholeWords) {
  EXPECT_EQ(TranslateDdl("CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, n integer, "
                         "r REAL, b BLOB, s TEXT DEFAULT 'INTEGER', integer_col INTEGER)"),
            "CREATE TABLE t (id BIGSERIAL PRIMARY KEY, n BIGINT, r DOUBLE PRECISION, b BYTEA, "
            "s TEXT DEFAULT 'INTEGER', integer_col BIGINT)");
  EXPECT_EQ(TranslateDdl("id INTEGER  PRIMARY\n KEY   AUTOINCREMENT -- INTEGER\n"),
            "id BIGSERIAL PRIMARY KEY -- INTEGER\n");
  EXPECT_EQ(TranslateDdl("experiment_id INTEGER PRIMARY KEY"), "experiment_id BIGINT PRIMARY KEY");
}

}  // namespace
}  // namespace det::master::store::sql
