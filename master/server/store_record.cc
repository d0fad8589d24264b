#include "master/server/store_record.h"

#include <libpq-fe.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "master/config/experiment_config.h"

namespace det::master::server {
namespace fs = std::filesystem;
namespace {

std::string RecordPath(const std::string& data_dir) {
  return (fs::path(data_dir) / kStoreRecordFile).string();
}

std::string NormalPath(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? fs::absolute(path).lexically_normal().string() : p.string();
}

// libpq conninfo value quoting: single quotes, ' and \ escaped.
std::string Quote(const std::string& v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

// Whether the PostgreSQL database holds this master's schema (its migrations table). A bare
// libpq session: nothing is created in a database that is about to be refused.
Result<bool> PostgresHasSchema(const std::string& conninfo) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string why = PQerrorMessage(conn);
    PQfinish(conn);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return Unavailable("cannot connect to PostgreSQL: " + why);
  }
  PGresult* res = PQexec(conn, "SELECT to_regclass('schema_migrations') IS NOT NULL");
  bool ok = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1;
  bool has = ok && std::string(PQgetvalue(res, 0, 0)) == "t";
  std::string why = ok ? "" : PQresultErrorMessage(res);
  PQclear(res);
  PQfinish(conn);
  if (!ok) return Internal("cannot read the PostgreSQL catalog: " + why);
  return has;
}

Status Mismatch(const std::string& data_dir, const StoreRecord& recorded,
                const StoreRecord& given) {
  return FailedPrecondition(
      "data dir " + data_dir + " belongs to the " + recorded.Describe() + " (recorded in " +
      RecordPath(data_dir) + "), but this start names the " + given.Describe() +
      "; start without a store to use the recorded one, or remove " + RecordPath(data_dir) +
      " to move this data dir to the other store on purpose");
}

}  // namespace

bool ConfigNamesStore(const std::string& yaml_text) {
  Result<nlohmann::json> doc = config::YamlToJson(yaml_text);
  if (!doc.ok() || !doc->is_object() || !doc->contains("db") || !(*doc)["db"].is_object()) {
    return false;
  }
  const nlohmann::json& db = (*doc)["db"];
  for (const char* k : {"type", "path", "host", "port", "name", "user", "password", "ssl_mode",
                        "ssl_root_cert"}) {
    if (db.contains(k)) return true;
  }
  return false;
}

std::string StoreRecord::Describe() const {
  if (store == "sqlite") return "SQLite database " + sqlite_path;
  return "PostgreSQL database " + dbname + " on " + (host.empty() ? "(default host)" : host) +
         ":" + (port.empty() ? "5432" : port) + " as user " +
         (user.empty() ? "(default)" : user);
}

bool StoreRecord::SameStore(const StoreRecord& o) const {
  if (store != o.store) return false;
  if (store == "sqlite") return sqlite_path == o.sqlite_path;
  auto p = [](const std::string& port) { return port.empty() ? std::string("5432") : port; };
  return host == o.host && p(port) == p(o.port) && dbname == o.dbname && user == o.user;
}

std::string StoreRecord::Conninfo() const {
  std::string out;
  auto add = [&](const char* key, const std::string& v) {
    if (v.empty()) return;
    if (!out.empty()) out += ' ';
    out += std::string(key) + "=" + Quote(v);
  };
  add("host", host);
  add("port", port);
  add("dbname", dbname);
  add("user", user);
  return out;
}

Result<StoreRecord> StoreRecordFor(const std::string& store, const std::string& db_path) {
  StoreRecord r;
  r.store = store;
  if (store == "sqlite") {
    r.sqlite_path = NormalPath(db_path);
    return r;
  }
  if (store != "postgres") {
    return InvalidArgument("db.type: must be 'sqlite' or 'postgres' (got '" + store + "')");
  }
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(db_path.c_str(), &err);
  if (opts == nullptr) {
    std::string why = err ? err : "out of memory";
    if (err) PQfreemem(err);
    return InvalidArgument("db: not a PostgreSQL connection string or URL: " + why);
  }
  std::string hostaddr;
  for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    std::string key = o->keyword, val = o->val;
    if (key == "host") r.host = val;
    if (key == "hostaddr") hostaddr = val;
    if (key == "port") r.port = val;
    if (key == "dbname") r.dbname = val;
    if (key == "user") r.user = val;
  }
  PQconninfoFree(opts);
  if (r.host.empty()) r.host = hostaddr;
  return r;
}

Result<std::optional<StoreRecord>> ReadStoreRecord(const std::string& data_dir) {
  std::string path = RecordPath(data_dir);
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::optional<StoreRecord>();
  std::ifstream in(path);
  if (!in) return Internal("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
  auto text = [&](const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
  };
  if (!j.is_object() || (text("store") != "sqlite" && text("store") != "postgres")) {
    return FailedPrecondition(path +
                              ": not a store record (want {\"store\": \"sqlite\"|\"postgres\", "
                              "...}); restore it or remove it to record the store again");
  }
  StoreRecord r;
  r.store = text("store");
  r.sqlite_path = text("path");
  r.host = text("host");
  r.port = text("port");
  r.dbname = text("dbname");
  r.user = text("user");
  if (r.store == "sqlite" && r.sqlite_path.empty()) {
    return FailedPrecondition(path + ": a sqlite record needs \"path\"");
  }
  return std::optional<StoreRecord>(r);
}

Status WriteStoreRecord(const std::string& data_dir, const StoreRecord& r) {
  nlohmann::json j = {{"store", r.store}};
  if (r.store == "sqlite") {
    j["path"] = r.sqlite_path;
  } else {
    j["host"] = r.host;
    j["port"] = r.port;
    j["dbname"] = r.dbname;
    j["user"] = r.user;
  }
  std::string path = RecordPath(data_dir);
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Internal("cannot write " + tmp);
    out << j.dump(2) << "\n";
    out.close();
    if (!out) return Internal("cannot write " + tmp);
  }
  chmod(tmp.c_str(), 0600);
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return Internal("cannot rename " + tmp + " to " + path + ": " + ec.message());
  return Status::Ok();
}

Result<std::optional<StoreRecord>> ReconcileStore(const std::string& data_dir, bool store_given,
                                                  std::string* store, std::string* db_path) {
  DET_ASSIGN_OR_RETURN(std::optional<StoreRecord> recorded, ReadStoreRecord(data_dir));
  if (recorded && !store_given) {
    *store = recorded->store;
    *db_path = recorded->store == "sqlite" ? recorded->sqlite_path : recorded->Conninfo();
  }
  DET_ASSIGN_OR_RETURN(StoreRecord given, StoreRecordFor(*store, *db_path));
  if (recorded && !recorded->SameStore(given)) return Mismatch(data_dir, *recorded, given);
  if (given.store == "sqlite") {
    std::error_code ec;
    bool exists = fs::exists(given.sqlite_path, ec);
    uintmax_t size = exists ? fs::file_size(given.sqlite_path, ec) : 0;
    if (recorded && !exists) {
      return FailedPrecondition(
          "data dir " + data_dir + " recorded the " + recorded->Describe() + " in " +
          RecordPath(data_dir) +
          ", but that file is missing: restore it (a fresh cluster would lose every experiment), "
          "or remove " + RecordPath(data_dir) + " to start an empty cluster on purpose");
    }
    if (exists && size == 0) {
      // SQLite would take an empty file for a new database: an empty cluster, blank passwords.
      return FailedPrecondition(
          "the SQLite database " + given.sqlite_path +
          " is empty (zero bytes): restore it from a backup, or remove it (and " +
          RecordPath(data_dir) + ") to start an empty cluster on purpose");
    }
  } else if (recorded) {
    DET_ASSIGN_OR_RETURN(bool has_schema, PostgresHasSchema(*db_path));
    if (!has_schema) {
      return FailedPrecondition(
          "data dir " + data_dir + " recorded the " + recorded->Describe() + " in " +
          RecordPath(data_dir) +
          ", but that database has no Determined schema (emptied or recreated): restore it, or "
          "remove " + RecordPath(data_dir) + " to start an empty cluster on purpose");
    }
  }
  if (recorded) return std::optional<StoreRecord>();
  return std::optional<StoreRecord>(given);
}

}  // namespace det::master::server
