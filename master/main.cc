// determined-master: flags -> MasterConfig -> store -> Master -> HTTP server.
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/clock.h"
#include "common/heap_retention.h"
#include "common/version.h"
#include "master/api/routes.h"
#include "master/server/agent_token_file.h"
#include "common/data_dir_lock.h"
#include "master/server/db_config.h"
#include "master/server/http_server.h"
#include "master/server/master.h"
#include "master/server/store_record.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/store_copy.h"

namespace {

int Fail(const std::string& message) {
  spdlog::error("{}", message);
  return 1;
}

// determined-master migrate-store: copies the installation at `from` into the empty PostgreSQL
// database at `to` (both brought to the latest migration first).
int MigrateStore(const std::string& from, const std::string& to) {
  namespace store = det::master::store;
  auto src = det::master::server::ParseDbUrl(from);
  if (!src.ok()) return Fail("--from: " + src.status().message());
  auto dst = det::master::server::ParseDbUrl(to);
  if (!dst.ok()) return Fail("--to: " + dst.status().message());
  if (src->store != "sqlite") return Fail("--from: must be sqlite:PATH");
  if (dst->store != "postgres") return Fail("--to: must be postgres://...");
  if (!std::filesystem::exists(src->path)) return Fail("--from: " + src->path + " does not exist");
  {
    auto a = store::SqliteStore::Open(src->path);
    if (!a.ok()) return Fail("--from: " + a.status().message());
    auto b = store::SqliteStore::OpenPostgres(dst->conninfo);
    if (!b.ok()) return Fail("--to: " + b.status().message());
  }
  auto from_db = store::OpenSqliteDb(src->path);
  if (!from_db.ok()) return Fail(from_db.status().message());
  auto to_db = store::OpenPostgresDb(dst->conninfo);
  if (!to_db.ok()) return Fail(to_db.status().message());
  auto report = store::CopyStoreTables(from_db->get(), to_db->get());
  if (!report.ok()) return Fail(report.status().message());
  int64_t total = 0;
  for (const auto& [table, n] : report->rows) {
    std::printf("%-24s %lld rows\n", table.c_str(), static_cast<long long>(n));
    total += n;
  }
  std::printf("copied %lld rows from %s\n", static_cast<long long>(total), src->path.c_str());
  // The data dir that recorded the copied file now belongs to the copy (store_record.h).
  std::string dir = std::filesystem::absolute(src->path).parent_path().string();
  auto recorded = det::master::server::ReadStoreRecord(dir);
  auto from_record = det::master::server::StoreRecordFor("sqlite", src->path);
  auto to_record = det::master::server::StoreRecordFor("postgres", dst->conninfo);
  if (recorded.ok() && *recorded && from_record.ok() && to_record.ok() &&
      (*recorded)->SameStore(*from_record)) {
    det::Status st = det::master::server::WriteStoreRecord(dir, *to_record);
    if (!st.ok()) return Fail(st.message());
    std::printf("data dir %s now records the %s\n", dir.c_str(), to_record->Describe().c_str());
  }
  return 0;
}

// Every connection holds a descriptor and the usual soft limit of 1,024 would cap the master
// far below max_connections: raise it toward the hard limit, as the Go runtime does for the
// upstream master (to 65,536 at most: enough, and children inherit it). The HTTP server
// lowers its cap to whatever limit remains.
void RaiseOpenFileLimit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  rlim_t want = rl.rlim_max == RLIM_INFINITY ? 65536 : std::min<rlim_t>(rl.rlim_max, 65536);
  if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want) return;
  rlim_t before = rl.rlim_cur;
  rl.rlim_cur = want;
  if (setrlimit(RLIMIT_NOFILE, &rl) == 0) {
    spdlog::info("open-file limit raised from {} to {}", before, want);
  } else {
    spdlog::warn("cannot raise the open-file limit from {}: {}", before, std::strerror(errno));
  }
}

}  // namespace

int main(int argc, char** argv) {
  using det::master::server::MasterConfig;
  det::RetainFreedHeap();  // before any thread starts (see common/heap_retention.h)
  CLI::App app{"determined-master: the Determined training platform master"};
  std::string config_file;
  std::optional<int> port;
  std::optional<std::string> bind, data_dir, store, log_level, webui_dir;
  app.add_option("--config-file", config_file, "master.yaml to read");
  app.add_option("--port", port, "HTTP port (default 8080)");
  app.add_option("--bind", bind, "address to listen on (default 127.0.0.1)");
  app.add_option("--data-dir", data_dir, "directory for the database and default checkpoints");
  app.add_option("--store", store, "sqlite (default) | postgres");
  std::optional<std::string> db_url;
  app.add_option("--db", db_url, "postgres://user:password@host:port/name, or sqlite:PATH");
  app.add_option("--log-level", log_level, "debug|info|warn|error");
  app.add_option("--webui-dir", webui_dir, "directory of the built web UI (default: build/webui)");
  std::optional<std::string> tls_cert, tls_key, agent_token_file;
  app.add_option("--tls-cert", tls_cert, "PEM certificate chain: serve HTTPS (security.tls.cert)");
  app.add_option("--tls-key", tls_key, "PEM private key of --tls-cert (security.tls.key)");
  app.add_option("--agent-token-file", agent_token_file,
                 "file holding the agent secret agents must present (security.agent_token_file)");
  app.set_version_flag("--version", det::kVersion);
  std::string migrate_from, migrate_to;
  CLI::App* migrate = app.add_subcommand(
      "migrate-store", "copy an installation's store into an empty PostgreSQL database");
  migrate->add_option("--from", migrate_from, "sqlite:PATH (the determined.db to copy)")
      ->required();
  migrate->add_option("--to", migrate_to, "postgres://user:password@host:port/name")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (*migrate) return MigrateStore(migrate_from, migrate_to);

  MasterConfig config;
  // Whether the config file or a flag names the store; when not, the data dir's record decides.
  bool store_given = store.has_value() || db_url.has_value();
  if (!config_file.empty()) {
    std::ifstream f(config_file);
    if (!f) return Fail("cannot read --config-file " + config_file);
    std::stringstream ss;
    ss << f.rdbuf();
    det::Status st = det::master::server::ApplyMasterYaml(ss.str(), &config);
    if (!st.ok()) return Fail("invalid master config " + config_file + ":\n" + st.message());
    store_given = store_given || det::master::server::ConfigNamesStore(ss.str());
  }
  if (port) config.port = *port;
  if (bind) config.bind_address = *bind;
  if (data_dir) config.data_dir = *data_dir;
  if (store) config.store = *store;
  if (db_url) {
    auto target = det::master::server::ParseDbUrl(*db_url);
    if (!target.ok()) return Fail("--db: " + target.status().message());
    config.store = target->store;
    config.db_path = target->store == "postgres" ? target->conninfo : target->path;
  }
  if (log_level) config.log_level = *log_level;
  if (webui_dir) config.webui_dir = *webui_dir;
  if (tls_cert) config.tls_cert = *tls_cert;
  if (tls_key) config.tls_key = *tls_key;
  if (agent_token_file) {
    config.agent_token_file = *agent_token_file;
    config.agent_token.clear();  // the flag replaces a secret from the config file
  }
  if (det::Status st = det::master::server::FinalizeMasterConfig(&config); !st.ok()) {
    return Fail(st.message());
  }
  spdlog::set_level(spdlog::level::from_str(config.log_level));
  RaiseOpenFileLimit();

  std::error_code ec;
  std::filesystem::create_directories(config.data_dir, ec);
  if (ec) return Fail("cannot create data dir " + config.data_dir + ": " + ec.message());
  // The data dir is this process's alone, before anything in it is read or written.
  auto data_dir_lock = det::DataDirLock::Acquire(
      config.data_dir, "master.lock", "determined-master",
      "a data dir serves one master: stop that master first or use another --data-dir");
  if (!data_dir_lock.ok()) return Fail(data_dir_lock.status().message());
  // Agents the master launches (Slurm, provisioner) get an inline secret through a 0600 file.
  if (det::Status st = det::master::server::MaterializeInlineAgentToken(&config); !st.ok()) {
    return Fail(st.message());
  }
  auto new_record = det::master::server::ReconcileStore(config.data_dir, store_given,
                                                        &config.store, &config.db_path);
  if (!new_record.ok()) return Fail(new_record.status().message());
  det::master::store::SqliteOptions db_options;
  auto sync = det::master::store::ParseSqliteSynchronous(config.db_synchronous);
  if (!sync.ok()) return Fail(sync.status().message());
  db_options.synchronous = *sync;
  auto metrics_sync = det::master::store::ParseSqliteSynchronous(config.db_metrics_synchronous);
  if (!metrics_sync.ok()) return Fail(metrics_sync.status().message());
  db_options.metrics_synchronous = *metrics_sync;
  auto opened = config.store == "postgres"
                    ? det::master::store::SqliteStore::OpenPostgres(config.db_path)
                    : det::master::store::SqliteStore::Open(config.db_path, db_options);
  if (!opened.ok()) return Fail(opened.status().message());
  if (*new_record) {
    if (det::Status st = det::master::server::WriteStoreRecord(config.data_dir, **new_record);
        !st.ok()) {
      return Fail(st.message());
    }
    spdlog::info("data dir {} records its store: the {}", config.data_dir,
                 (*new_record)->Describe());
  }

  // Block the stop signals before any thread starts so only sigwait sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  det::SystemClock clock;
  det::master::server::Master master(config, std::move(opened).value(), &clock);
  // Before any thread starts: spdlog's sink list is not synchronised.
  spdlog::default_logger()->sinks().push_back(
      std::make_shared<det::master::server::LogBufferSink>(master.log_buffer()));
  if (det::Status st = master.Start(); !st.ok()) return Fail(st.message());
  det::master::server::Router router;
  det::master::api::RegisterRoutes(&router, &master);
  det::master::server::HttpServerOptions http_options;
  http_options.tls_cert_file = config.tls_cert;
  http_options.tls_key_file = config.tls_key;
  det::master::server::HttpServer server(config.bind_address, config.port, &router, http_options);
  if (det::Status st = server.Start(); !st.ok()) return Fail(st.message());
  const char* scheme = server.tls() ? "https" : "http";
  spdlog::info("determined-master {} listening on {}://{}:{} (data dir {})", det::kVersion, scheme,
               config.bind_address, server.port(), config.data_dir);
  if (config.agent_token.empty()) {
    spdlog::warn(
        "security.agent_token is not set: anyone who reaches the master can register an agent "
        "(see docs/operations.md, \"Agent credentials\")");
  }
  if (config.webui_dir.empty()) {
    spdlog::warn("web UI not found (run `make build` or pass --webui-dir); /det/ answers 404");
  } else {
    spdlog::info("web UI at {}://{}:{}/det/ (files in {})", scheme, config.bind_address,
                 server.port(), config.webui_dir);
  }

  int sig = 0;
  sigwait(&signals, &sig);
  spdlog::info("received signal {}, shutting down", sig);
  // Handlers use the Master: the server drains first (long polls are answered at once so it
  // need not wait for them), and only then does the Master stop.
  master.BeginShutdown();
  server.Stop();
  master.Stop();
  return 0;
}
