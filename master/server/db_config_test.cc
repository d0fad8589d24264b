#include "master/server/db_config.h"

#include <gtest/gtest.h>

#include "master/server/master_config.h"

namespace det::master::server {
namespace {

TEST(DbConfig, YamlFieldsMakeAQuotedConnectionString) {
  auto t = PostgresTargetFromYaml(
      {{"host", "db.local"}, {"port", 6543}, {"user", "det"}, {"password", "p'w\\x"}});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->store, "postgres");
  EXPECT_EQ(t->conninfo,
            "host='db.local' port=6543 dbname='determined' user='det' sslmode=disable "
            "password='p\\'w\\\\x'");
  // No PostgreSQL field: the embedded store stays.
  auto none = PostgresTargetFromYaml({{"synchronous", "normal"}});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->store, "");
}

TEST(DbConfig, BadValuesNameTheField) {
  auto port = PostgresTargetFromYaml({{"host", "h"}, {"port", 70000}});
  ASSERT_FALSE(port.ok());
  EXPECT_NE(port.status().message().find("db.port"), std::string::npos);
  auto mode = PostgresTargetFromYaml({{"host", "h"}, {"ssl_mode", "sometimes"}});
  ASSERT_FALSE(mode.ok());
  EXPECT_NE(mode.status().message().find("db.ssl_mode"), std::string::npos);
  EXPECT_NE(mode.status().message().find("sometimes"), std::string::npos);
}

TEST(DbConfig, UrlsPickTheStore) {
  auto pg = ParseDbUrl("postgres://u:p@127.0.0.1:5432/det");
  ASSERT_TRUE(pg.ok());
  EXPECT_EQ(pg->store, "postgres");
  EXPECT_EQ(pg->conninfo, "postgres://u:p@127.0.0.1:5432/det");
  auto lite = ParseDbUrl("sqlite:/tmp/x.db");
  ASSERT_TRUE(lite.ok());
  EXPECT_EQ(lite->store, "sqlite");
  EXPECT_EQ(lite->path, "/tmp/x.db");
  EXPECT_FALSE(ParseDbUrl("mysql://x").ok());
}

TEST(DbConfig, PasswordsAreRedactedForDisplay) {
  EXPECT_EQ(RedactDbPassword("postgres://u:secret@h:5432/d"), "postgres://u:********@h:5432/d");
  EXPECT_EQ(RedactDbPassword("postgres://u@h:5432/d"), "postgres://u@h:5432/d");
  EXPECT_EQ(RedactDbPassword("host='h' password='a\\'b' sslmode=disable"),
            "host='h' password=******** sslmode=disable");
}

TEST(DbConfig, MasterYamlSelectsPostgres) {
  MasterConfig config;
  ASSERT_TRUE(ApplyMasterYaml("db:\n  host: 127.0.0.1\n  name: det\n", &config).ok());
  EXPECT_EQ(config.store, "postgres");
  EXPECT_NE(config.db_path.find("dbname='det'"), std::string::npos);
  EXPECT_TRUE(FinalizeMasterConfig(&config).ok());
  MasterConfig bad;
  bad.store = "postgres";
  EXPECT_FALSE(FinalizeMasterConfig(&bad).ok());
}

}  // namespace
}  // namespace det::master::server
