#pragma once
// HttpClient: a small blocking HTTP client over libcurl, used by `det` and the agent.
// Thread-compatible: use one instance per thread.

#include <functional>
#include <map>
#include <string>

#include "common/status.h"

namespace det {

struct HttpResponse {
  long status = 0;
  std::string body;
};

class HttpClient {
 public:
  // `base_url` like "http://127.0.0.1:8080" (no trailing slash needed).
  explicit HttpClient(std::string base_url);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  void SetHeader(const std::string& name, const std::string& value) { headers_[name] = value; }
  const std::string& base_url() const { return base_url_; }

  // Sends one request. A transport failure (refused, timeout) is kUnavailable; any HTTP status
  // comes back as a response.
  Result<HttpResponse> Request(const std::string& method, const std::string& path,
                               const std::string& body = "", long timeout_seconds = 60);

  // Streams the response body line by line to `on_line` (without the trailing newline).
  // Returning false from `on_line` stops the stream. Returns the HTTP status.
  Result<long> StreamLines(const std::string& path,
                           const std::function<bool(const std::string&)>& on_line,
                           long timeout_seconds = 0);

 private:
  std::string base_url_;
  std::map<std::string, std::string> headers_;
  void* curl_ = nullptr;
};

// Percent-encodes a query parameter value.
std::string UrlEncode(const std::string& s);

}  // namespace det
