#pragma once
// HttpServer: an asynchronous HTTP/1.1 server on Boost.Beast/Asio. A fixed set of io threads
// reads and writes every connection (keep-alive, capped in number and request size); requests
// are dispatched through a Router on a bounded worker pool, one request at a time per connection
// so answers keep their order. A handler that has to wait (a long poll) returns a deferred
// response and answers later through a Responder, holding no thread meanwhile. Stop drains:
// no new connections, running requests finish up to a deadline, then everything closes.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"

namespace det::master::server {

struct HttpRequest {
  std::string method;
  std::string path;                          // without the query string
  std::string target;                        // as sent: path and query string
  std::map<std::string, std::string> query;  // decoded; the last value of a repeated key
  // Every decoded value in order, for repeated keys (gRPC-gateway lists: ?trialIds=1&trialIds=2).
  std::multimap<std::string, std::string> query_all;
  std::map<std::string, std::string> headers;  // lower-case names
  std::map<std::string, std::string> params;   // from the route pattern
  std::string body;
  std::string remote_address;

  std::string Header(const std::string& lower_name) const;
  std::string Query(const std::string& name, const std::string& fallback = "") const;
  std::vector<std::string> QueryAll(const std::string& name) const;
};

// Lets a streaming handler write chunks; Write returns false once the client is gone or the
// server is stopping, and the handler should then return. Write("") sends nothing and only
// checks that: a following handler calls it every second or so while it has nothing to send,
// so a departed client (whose socket shows its FIN or an error) frees the thread within seconds.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  virtual bool Write(const std::string& chunk) = 0;
};

struct HttpResponse;
// Delivers a deferred response; callable once, from any thread. A Responder dropped without
// being called answers 500.
using Responder = std::function<void(HttpResponse)>;

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // When set, the body is produced by this function as a chunked stream. It runs on a thread of
  // its own (it may block between chunks), joined once it returns; at most
  // HttpServerOptions::max_streams run at once, one more is answered 503.
  std::function<void(ResponseStream&)> stream;
  // When set, the response is given later: the server calls this with a Responder right after
  // the handler returns, and the connection waits (holding no thread) until it is called.
  std::function<void(Responder)> deferred;
  // When set, the connection is handed over: the server calls this on a thread of its own with
  // the socket's descriptor and any bytes it read past the request, writes nothing itself, and
  // closes the connection once it returns (the /proxy/ route's tunnels).
  std::function<void(int fd, const std::string& read_ahead)> takeover;

  // When set (only by a handler of an inline route, Router::AddInline), the request continues on
  // a worker thread: the server answers with what this returns there. For the cases of an
  // inline route that may wait (a synchronous store write).
  std::function<HttpResponse()> on_worker;

  static HttpResponse OnWorker(std::function<HttpResponse()> run) {
    HttpResponse r;
    r.on_worker = std::move(run);
    return r;
  }
  static HttpResponse Deferred(std::function<void(Responder)> start) {
    HttpResponse r;
    r.deferred = std::move(start);
    return r;
  }
};

using Handler = std::function<HttpResponse(HttpRequest&)>;

// Where Router::Match sends a request: its handler, or (none) the 404/405 to answer, or a 400
// with `error` for a path parameter or query that does not decode (bad escape, NUL byte).
struct RouteMatch {
  const Handler* handler = nullptr;
  bool run_inline = false;  // added with AddInline
  int status = 404;
  std::string error;
};

// Router: matches "METHOD /a/{name}/b" patterns; `{name}` binds one path segment.
class Router {
 public:
  void Add(const std::string& method, const std::string& pattern, Handler handler);
  // Like Add, for a handler that never waits long (memory only, then a deferred answer): the
  // server runs it on the connection's io thread, sparing the hand-off to a worker and back.
  void AddInline(const std::string& method, const std::string& pattern, Handler handler);
  // A handler for `prefix` itself and every path below it ("/det" takes /det, /det/ and
  // /det/a/b), tried only when no pattern route matches the path.
  void AddPrefix(const std::string& method, const std::string& prefix, Handler handler);
  // Returns 404/405 JSON errors when nothing matches.
  HttpResponse Dispatch(HttpRequest& req) const;
  // The route `req` goes to (sets req.params); Run answers it as Dispatch does.
  RouteMatch Match(HttpRequest& req) const;
  static HttpResponse Run(const RouteMatch& match, HttpRequest& req);

  // Every registered route as {method, pattern}, in registration order; a prefix route reads
  // "<prefix>/{path}" (its own path and everything below). The REST contract test compares these
  // with api/openapi.yaml.
  std::vector<std::pair<std::string, std::string>> Routes() const;
  // Calls `fn(method, pattern, handler)` for every route, as Routes() names them (the route
  // table with each route's auth class, master/api/route_helpers.h RouteAuthTable).
  void ForEachRoute(
      const std::function<void(const std::string&, const std::string&, const Handler&)>& fn) const;

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;
    Handler handler;
    bool run_inline = false;
  };
  std::vector<Route> routes_;
  std::vector<std::pair<std::string, Route>> prefix_routes_;  // prefix -> method and handler
};

struct HttpServerOptions {
  int io_threads = 0;              // 0: hardware_concurrency, at least 2
  int worker_threads = 0;          // handlers (they may block on the store); 0: 16 x io threads
  // Open connections; one more is answered 503 and closed. Start lowers it to fit the open-file
  // limit (RLIMIT_NOFILE less a reserve for the store, files and the 503 answers).
  size_t max_connections = 10000;
  // Streamed responses and connection takeovers running at once (a thread each); one more: 503.
  size_t max_streams = 1000;
  // Context uploads are limited to 95 MiB of file content; base64 inflates that by 4/3.
  uint64_t max_body_bytes = 160ull << 20;  // larger: 413
  uint32_t max_header_bytes = 64u << 10;   // request line and headers; larger: 431
  std::chrono::milliseconds idle_timeout{std::chrono::minutes(10)};   // keep-alive, no request
  std::chrono::milliseconds drain_timeout{std::chrono::seconds(10)};  // Stop waits this long
  // When both are set the server speaks HTTPS only (PEM files: the certificate chain, leaf
  // first, and its private key); Start fails when they cannot be loaded.
  std::string tls_cert_file;
  std::string tls_key_file;
  std::chrono::milliseconds handshake_timeout{std::chrono::seconds(10)};
};

struct HttpServerCore;  // the server's shared state (http_server.cc)

class HttpServer {
 public:
  HttpServer(std::string bind_address, int port, const Router* router,
             HttpServerOptions options = {});
  ~HttpServer();

  // Binds and starts accepting. `port` 0 picks a free port (see port()).
  Status Start();
  // Stops accepting, closes idle connections, waits up to drain_timeout for running requests
  // (deferred ones included) to be answered, then closes every connection and joins all
  // threads. Streamed responses are told to end at once (their next Write fails); a stream
  // function still running a few seconds later is left behind detached, so Stop always
  // returns in bounded time. Idempotent.
  void Stop();
  int port() const { return port_; }
  // Open connections and requests read but not yet answered (tests, metrics).
  size_t connections() const;
  size_t in_flight() const;
  int io_threads() const;
  int worker_threads() const;
  // The connection cap in force (options.max_connections lowered to the open-file limit).
  size_t max_connections() const;
  // Streamed responses and takeovers running, and their threads not yet joined (tests).
  size_t streams() const;
  size_t unjoined_stream_threads() const;
  // accept() calls that failed (e.g. out of descriptors); each failure pauses accepting.
  uint64_t accept_failures() const;
  bool tls() const;  // serving HTTPS

 private:
  std::shared_ptr<HttpServerCore> core_;
  std::string bind_address_;
  int port_;
  bool started_ = false;
};

// The JSON error body of Determined's gRPC gateway: {"error":{"code","reason","error"}}.
std::string ErrorJson(int grpc_code, const std::string& reason, const std::string& message);

// Splits "a=1&b=x%20y" into a decoded map.
std::map<std::string, std::string> ParseQuery(const std::string& query);
// Like ParseQuery but keeps every value of a repeated key.
std::multimap<std::string, std::string> ParseQueryAll(const std::string& query);

}  // namespace det::master::server
