#include "master/server/db_config.h"

#include <set>

namespace det::master::server {
namespace {

// A libpq conninfo value, single-quoted with ' and \ escaped.
std::string Quote(const std::string& v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

}  // namespace

Result<DbTarget> PostgresTargetFromYaml(const nlohmann::json& db) {
  static const std::set<std::string> kFields = {"host",     "port",     "name",         "user",
                                                "password", "ssl_mode", "ssl_root_cert"};
  DbTarget out;
  if (!db.is_object()) return InvalidArgument("db: must be a mapping");
  bool any = false;
  for (const std::string& f : kFields) any = any || db.contains(f);
  if (!any) return out;
  auto text = [&](const char* key, const std::string& fallback) -> Result<std::string> {
    if (!db.contains(key) || db[key].is_null()) return fallback;
    if (db[key].is_string()) return db[key].get<std::string>();
    if (db[key].is_number_integer()) return std::to_string(db[key].get<int64_t>());
    return InvalidArgument(std::string("db.") + key + ": must be a string (got " + db[key].dump() +
                           ")");
  };
  DET_ASSIGN_OR_RETURN(std::string host, text("host", "localhost"));
  DET_ASSIGN_OR_RETURN(std::string port, text("port", "5432"));
  DET_ASSIGN_OR_RETURN(std::string name, text("name", "determined"));
  DET_ASSIGN_OR_RETURN(std::string user, text("user", "postgres"));
  DET_ASSIGN_OR_RETURN(std::string password, text("password", ""));
  DET_ASSIGN_OR_RETURN(std::string ssl_mode, text("ssl_mode", "disable"));
  DET_ASSIGN_OR_RETURN(std::string root_cert, text("ssl_root_cert", ""));
  if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos ||
      port.size() > 5 || std::stoi(port) < 1 || std::stoi(port) > 65535) {
    return InvalidArgument("db.port: must be a port number 1-65535 (got '" + port + "')");
  }
  static const std::set<std::string> kModes = {"disable", "allow",     "prefer",
                                               "require", "verify-ca", "verify-full"};
  if (!kModes.count(ssl_mode)) {
    return InvalidArgument(
        "db.ssl_mode: must be one of disable, allow, prefer, require, "
        "verify-ca, verify-full (got '" +
        ssl_mode + "')");
  }
  if (name.empty()) return InvalidArgument("db.name: must not be empty");
  out.store = "postgres";
  out.conninfo = "host=" + Quote(host) + " port=" + port + " dbname=" + Quote(name) +
                 " user=" + Quote(user) + " sslmode=" + ssl_mode;
  if (!password.empty()) out.conninfo += " password=" + Quote(password);
  if (!root_cert.empty()) out.conninfo += " sslrootcert=" + Quote(root_cert);
  return out;
}

Result<DbTarget> ParseDbUrl(const std::string& url) {
  DbTarget out;
  if (url.rfind("postgres://", 0) == 0 || url.rfind("postgresql://", 0) == 0) {
    out.store = "postgres";
    out.conninfo = url;
    return out;
  }
  if (url.rfind("sqlite:", 0) == 0 && url.size() > 7) {
    out.store = "sqlite";
    out.path = url.substr(7);
    return out;
  }
  return InvalidArgument(
      "db url: must be postgres://user:password@host:port/name or "
      "sqlite:PATH (got '" +
      url + "')");
}

std::string RedactDbPassword(const std::string& conninfo) {
  const std::string kMask = "********";
  size_t scheme = conninfo.find("://");
  if (scheme != std::string::npos) {
    size_t at = conninfo.find('@', scheme + 3);
    size_t colon = conninfo.find(':', scheme + 3);
    if (at == std::string::npos || colon == std::string::npos || colon > at) return conninfo;
    return conninfo.substr(0, colon + 1) + kMask + conninfo.substr(at);
  }
  size_t key = conninfo.find("password=");
  if (key == std::string::npos) return conninfo;
  size_t start = key + 9, end = start;
  if (end < conninfo.size() && conninfo[end] == '\'') {
    for (++end; end < conninfo.size() && conninfo[end] != '\''; ++end) {
      if (conninfo[end] == '\\') ++end;
    }
    if (end < conninfo.size()) ++end;
  } else {
    while (end < conninfo.size() && conninfo[end] != ' ') ++end;
  }
  return conninfo.substr(0, start) + kMask + conninfo.substr(end);
}

}  // namespace det::master::server
