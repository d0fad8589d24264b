// libFuzzer target for the master's HTTP router: every input is one request (method, target with
// its query, headers, body) dispatched to the real routes over a Master on a SQLite store in a
// temp dir, exactly as the HTTP server hands it over. Findings: a crash or sanitizer report, an
// exception out of a handler (the server would answer 500), a status outside 100..599, an
// internal error (500), or a JSON answer that is not well-formed JSON.
//
// Input format (what the seed corpus, fuzz/make_router_corpus.py, writes):
//   METHOD SP TARGET LF
//   name: value LF        (zero or more headers)
//   LF
//   body
// In a header value "@admin" and "@user" stand for session tokens of the built-in admin and
// determined users, so that the fuzzer reaches the handlers behind authentication.

#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "master/api/routes.h"
#include "master/server/master.h"
#include "master/server/settle_response.h"
#include "master/store/sqlite/sqlite_store.h"

namespace {

namespace server = det::master::server;
using nlohmann::json;

struct World {
  std::filesystem::path dir;
  det::SystemClock clock;
  std::unique_ptr<server::Master> master;
  server::Router router;
  std::string admin_token;
  std::string user_token;
};

World* world = nullptr;

[[noreturn]] void Finding(const std::string& what, const server::HttpRequest& req,
                          const std::string& body) {
  std::fprintf(stderr, "router_fuzz finding: %s\n  request: %s %s\n  answer: %s\n", what.c_str(),
               req.method.c_str(), req.target.substr(0, 300).c_str(), body.substr(0, 300).c_str());
  std::abort();
}

// Collects a streamed answer's first chunk and then reports the client gone.
class GoneAfterFirstChunk : public server::ResponseStream {
 public:
  bool Write(const std::string& chunk) override {
    if (!first_) first_ = chunk;
    return false;
  }
  std::optional<std::string> first_;
};

// As the server would answer, the worker step of an inline route included.
server::HttpResponse Dispatch(server::HttpRequest& req) {
  return server::Settle(world->router.Dispatch(req));
}

std::string Login(const std::string& user) {
  server::HttpRequest req;
  req.method = "POST";
  req.path = req.target = "/api/v1/auth/login";
  req.body = json{{"username", user}, {"password", ""}}.dump();
  req.remote_address = "127.0.0.1";
  server::HttpResponse r = Dispatch(req);
  json j = json::parse(r.body, nullptr, false);
  if (r.status != 200 || !j.is_object() || !j.contains("token")) {
    std::fprintf(stderr, "router_fuzz: login as %s failed: %d %s\n", user.c_str(), r.status,
                 r.body.c_str());
    std::abort();
  }
  return j["token"].get<std::string>();
}

// One experiment with a model definition, so that routes naming id 1 reach real rows.
void CreateExperiment() {
  server::HttpRequest req;
  req.method = "POST";
  req.path = req.target = "/api/v1/experiments";
  req.headers["authorization"] = "Bearer " + world->admin_token;
  req.body = json{
      {"config",
       "name: fuzz\nentrypoint: python3 train.py\nsearcher:\n  name: single\n"
       "  metric: loss\n  max_length:\n    batches: 10\n"},
      {"modelDefinition",
       json::array({{{"path", "train.py"}, {"type", 48}, {"content", "cHJpbnQoMSkK"}},
                    {{"path", "sub"}, {"type", 53}, {"content", ""}},
                    {{"path", "sub/a.txt"}, {"type", 48}, {"content", "YQ=="}}})},
      {"activate",
       false}}.dump();
  req.remote_address = "127.0.0.1";
  server::HttpResponse r = Dispatch(req);
  if (r.status != 200) {
    std::fprintf(stderr, "router_fuzz: creating the experiment failed: %d %s\n", r.status,
                 r.body.c_str());
    std::abort();
  }
}

void Shutdown() {
  if (world == nullptr) return;
  world->master->Stop();
  std::error_code ec;
  std::filesystem::remove_all(world->dir, ec);
}

// Splits the input into a request; false when it has no request line.
bool ParseInput(std::string_view in, server::HttpRequest* req) {
  size_t eol = in.find('\n');
  if (eol == std::string_view::npos) return false;
  std::string_view line = in.substr(0, eol);
  size_t sp = line.find(' ');
  if (sp == std::string_view::npos) return false;
  req->method = std::string(line.substr(0, sp));
  req->target = std::string(line.substr(sp + 1));
  size_t q = req->target.find('?');
  req->path = req->target.substr(0, q);
  if (q != std::string::npos) {
    req->query = server::ParseQuery(req->target.substr(q + 1));
    req->query_all = server::ParseQueryAll(req->target.substr(q + 1));
  }
  in.remove_prefix(eol + 1);
  while (!in.empty()) {
    eol = in.find('\n');
    std::string_view h = in.substr(0, eol);
    in.remove_prefix(eol == std::string_view::npos ? in.size() : eol + 1);
    if (h.empty()) break;
    size_t colon = h.find(':');
    if (colon == std::string_view::npos) continue;
    std::string name(h.substr(0, colon));
    for (char& c : name) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
    std::string value(h.substr(colon + 1));
    if (!value.empty() && value.front() == ' ') value.erase(0, 1);
    for (auto [alias, token] :
         {std::pair<const char*, const std::string*>{"@admin", &world->admin_token},
          {"@user", &world->user_token}}) {
      for (size_t at = value.find(alias); at != std::string::npos; at = value.find(alias)) {
        value.replace(at, std::string_view(alias).size(), *token);
      }
    }
    req->headers[name] = value;
  }
  req->body = std::string(in);
  req->remote_address = "127.0.0.1";
  return true;
}

void Check(server::HttpRequest& req, server::HttpResponse& resp) {
  if (resp.status < 100 || resp.status > 599) {
    Finding("status " + std::to_string(resp.status), req, resp.body);
  }
  if (resp.status == 500) Finding("internal error", req, resp.body);
  std::string body = resp.body;
  if (resp.stream) {
    GoneAfterFirstChunk out;
    try {
      resp.stream(out);
    } catch (const std::exception& e) {
      Finding(std::string("stream threw ") + e.what(), req, "");
    }
    // A streamed JSON answer is one JSON document per line.
    body = out.first_.value_or("");
    while (!body.empty() && body.back() == '\n') body.pop_back();
    if (body.find('\n') != std::string::npos) body.clear();
  }
  bool is_json = resp.content_type.rfind("application/json", 0) == 0;
  if (is_json && !body.empty() && !json::accept(body)) Finding("malformed JSON", req, body);
  if (resp.status >= 400 && resp.status != 404 && resp.status != 405 && is_json) {
    json j = json::parse(body, nullptr, false);
    if (!j.is_object() || !j.contains("error")) Finding("error without an error body", req, body);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  spdlog::set_level(spdlog::level::err);  // the master's own logging would drown the fuzzer's
  char tmpl[] = "/tmp/det_router_fuzz_XXXXXX";
  if (mkdtemp(tmpl) == nullptr) std::abort();
  world = new World();
  world->dir = tmpl;
  server::MasterConfig config;
  config.data_dir = world->dir.string();
  config.log_level = "error";
  if (!server::FinalizeMasterConfig(&config).ok()) std::abort();
  auto store = det::master::store::SqliteStore::Open((world->dir / "determined.db").string());
  if (!store.ok()) std::abort();
  world->master = std::make_unique<server::Master>(config, std::move(store).value(), &world->clock);
  det::Status st = world->master->Start();
  if (!st.ok()) {
    std::fprintf(stderr, "router_fuzz: master start: %s\n", st.ToString().c_str());
    std::abort();
  }
  det::master::api::RegisterRoutes(&world->router, world->master.get());
  world->admin_token = Login("admin");
  world->user_token = Login("determined");
  CreateExperiment();
  std::atexit(Shutdown);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  server::HttpRequest req;
  if (!ParseInput(std::string_view(reinterpret_cast<const char*>(data), size), &req)) return 0;
  // The server never hands over a connection upgrade here (the proxy's websockets).
  server::HttpResponse resp;
  try {
    resp = Dispatch(req);
  } catch (const std::exception& e) {
    Finding(std::string("handler threw ") + e.what(), req, "");
  }
  Check(req, resp);
  return 0;
}
