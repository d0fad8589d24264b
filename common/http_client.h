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

// How a client checks the master's TLS certificate (https:// URLs only).
struct TlsClientOptions {
  std::string ca_file;    // PEM CA bundle trusted for the master; empty: the system's CAs
  std::string cert_name;  // the name the certificate must carry when not the URL's host
  bool noverify = false;  // accept any certificate (insecure; Determined's "noverify")
};

// Determined's environment variables: DET_MASTER_CERT_FILE (a PEM file, or "noverify") and
// DET_MASTER_CERT_NAME.
TlsClientOptions TlsOptionsFromEnvironment();

class HttpClient {
 public:
  // What every HttpClient created afterwards uses (default: TlsOptionsFromEnvironment()). Set
  // once at startup, before other threads create clients.
  static void SetDefaultTls(const TlsClientOptions& options);
  static TlsClientOptions DefaultTls();

  // `base_url` like "http://127.0.0.1:8080" (no trailing slash needed).
  explicit HttpClient(std::string base_url);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  void SetHeader(const std::string& name, const std::string& value) { headers_[name] = value; }
  void SetTls(TlsClientOptions options) { tls_ = std::move(options); }
  const std::string& base_url() const { return base_url_; }

  // Sends one request. A transport failure (refused, timeout) is kUnavailable; a certificate
  // the client cannot verify is kFailedPrecondition naming the master and the reason; any HTTP
  // status comes back as a response.
  Result<HttpResponse> Request(const std::string& method, const std::string& path,
                               const std::string& body = "", long timeout_seconds = 60);

  // Streams the response body line by line to `on_line` (without the trailing newline).
  // Returning false from `on_line` stops the stream. Returns the HTTP status.
  Result<long> StreamLines(const std::string& path,
                           const std::function<bool(const std::string&)>& on_line,
                           long timeout_seconds = 0);

 private:
  // Applies the TLS options to the reset handle; `url` may be rewritten (cert_name).
  void ConfigureTls(std::string* url);
  Status TransportError(const std::string& what, int curl_code) const;

  std::string base_url_;
  std::map<std::string, std::string> headers_;
  TlsClientOptions tls_;
  std::string connect_to_;  // CURLOPT_CONNECT_TO entry for cert_name
  char error_buffer_[256] = {0};
  void* curl_ = nullptr;
};

// Percent-encodes a query parameter value.
std::string UrlEncode(const std::string& s);

}  // namespace det
