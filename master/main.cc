// determined-master: flags -> MasterConfig -> store -> Master -> HTTP server.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/clock.h"
#include "common/version.h"
#include "master/api/routes.h"
#include "master/server/http_server.h"
#include "master/server/master.h"
#include "master/store/sqlite/sqlite_store.h"

namespace {

int Fail(const std::string& message) {
  spdlog::error("{}", message);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using det::master::server::MasterConfig;
  CLI::App app{"determined-master: the Determined training platform master"};
  std::string config_file;
  std::optional<int> port;
  std::optional<std::string> bind, data_dir, store, log_level, webui_dir;
  app.add_option("--config-file", config_file, "master.yaml to read");
  app.add_option("--port", port, "HTTP port (default 8080)");
  app.add_option("--bind", bind, "address to listen on (default 127.0.0.1)");
  app.add_option("--data-dir", data_dir, "directory for the database and default checkpoints");
  app.add_option("--store", store, "sqlite (default)");
  app.add_option("--log-level", log_level, "debug|info|warn|error");
  app.add_option("--webui-dir", webui_dir, "directory of the built web UI (default: build/webui)");
  std::optional<std::string> tls_cert, tls_key, agent_token_file;
  app.add_option("--tls-cert", tls_cert, "PEM certificate chain: serve HTTPS (security.tls.cert)");
  app.add_option("--tls-key", tls_key, "PEM private key of --tls-cert (security.tls.key)");
  app.add_option("--agent-token-file", agent_token_file,
                 "file holding the agent secret agents must present (security.agent_token_file)");
  app.set_version_flag("--version", det::kVersion);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  MasterConfig config;
  if (!config_file.empty()) {
    std::ifstream f(config_file);
    if (!f) return Fail("cannot read --config-file " + config_file);
    std::stringstream ss;
    ss << f.rdbuf();
    det::Status st = det::master::server::ApplyMasterYaml(ss.str(), &config);
    if (!st.ok()) return Fail("invalid master config " + config_file + ":\n" + st.message());
  }
  if (port) config.port = *port;
  if (bind) config.bind_address = *bind;
  if (data_dir) config.data_dir = *data_dir;
  if (store) config.store = *store;
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

  std::error_code ec;
  std::filesystem::create_directories(config.data_dir, ec);
  if (ec) return Fail("cannot create data dir " + config.data_dir + ": " + ec.message());
  det::master::store::SqliteOptions db_options;
  auto sync = det::master::store::ParseSqliteSynchronous(config.db_synchronous);
  if (!sync.ok()) return Fail(sync.status().message());
  db_options.synchronous = *sync;
  auto opened = det::master::store::SqliteStore::Open(config.db_path, db_options);
  if (!opened.ok()) return Fail(opened.status().message());

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
