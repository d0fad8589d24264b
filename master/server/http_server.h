#pragma once
// HttpServer: a blocking HTTP/1.1 server on Boost.Beast, one thread per connection, so handlers
// may block (long polls, streamed logs) without stalling others. Requests are dispatched through
// a Router. Thread-safe to Start/Stop from the owning thread.

#include <atomic>
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
  std::string path;                              // without the query string
  std::map<std::string, std::string> query;      // decoded
  std::map<std::string, std::string> headers;    // lower-case names
  std::map<std::string, std::string> params;     // from the route pattern
  std::string body;
  std::string remote_address;

  std::string Header(const std::string& lower_name) const;
  std::string Query(const std::string& name, const std::string& fallback = "") const;
};

// Lets a streaming handler write chunks; Write returns false once the client is gone.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  virtual bool Write(const std::string& chunk) = 0;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // When set, the body is produced by this function as a chunked stream.
  std::function<void(ResponseStream&)> stream;
};

using Handler = std::function<HttpResponse(HttpRequest&)>;

// Router: matches "METHOD /a/{name}/b" patterns; `{name}` binds one path segment.
class Router {
 public:
  void Add(const std::string& method, const std::string& pattern, Handler handler);
  // Returns 404/405 JSON errors when nothing matches.
  HttpResponse Dispatch(HttpRequest& req) const;

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;
    Handler handler;
  };
  std::vector<Route> routes_;
};

class HttpServer {
 public:
  HttpServer(std::string bind_address, int port, const Router* router);
  ~HttpServer();

  // Binds and starts accepting. `port` 0 picks a free port (see port()).
  Status Start();
  void Stop();
  int port() const { return port_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string bind_address_;
  int port_;
  const Router* router_;
};

// Splits "a=1&b=x%20y" into a decoded map.
std::map<std::string, std::string> ParseQuery(const std::string& query);

}  // namespace det::master::server
