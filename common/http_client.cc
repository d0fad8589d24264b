#include "common/http_client.h"

#include <curl/curl.h>

#include <cstdlib>
#include <mutex>
#include <optional>

namespace det {
namespace {

std::once_flag g_curl_init;
std::mutex g_tls_mu;
std::optional<TlsClientOptions> g_default_tls;  // guarded by g_tls_mu

bool IsTlsFailure(CURLcode rc) {
  return rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
         rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_SSL_ISSUER_ERROR ||
         rc == CURLE_SSL_PINNEDPUBKEYNOTMATCH || rc == CURLE_SSL_CERTPROBLEM;
}

size_t AppendBody(char* ptr, size_t size, size_t nmemb, void* userdata) {
  static_cast<std::string*>(userdata)->append(ptr, size * nmemb);
  return size * nmemb;
}

struct LineStream {
  const std::function<bool(const std::string&)>* on_line;
  std::string pending;
  bool stopped = false;
};

size_t StreamBody(char* ptr, size_t size, size_t nmemb, void* userdata) {
  auto* s = static_cast<LineStream*>(userdata);
  s->pending.append(ptr, size * nmemb);
  size_t start = 0;
  for (size_t i = 0; i < s->pending.size(); ++i) {
    if (s->pending[i] == '\n') {
      if (!(*s->on_line)(s->pending.substr(start, i - start))) {
        s->stopped = true;
        return 0;  // abort transfer
      }
      start = i + 1;
    }
  }
  s->pending.erase(0, start);
  return size * nmemb;
}

}  // namespace

TlsClientOptions TlsOptionsFromEnvironment() {
  TlsClientOptions out;
  if (const char* f = std::getenv("DET_MASTER_CERT_FILE"); f != nullptr && *f != '\0') {
    std::string file(f);
    if (file == "noverify" || file == "NOVERIFY") {
      out.noverify = true;
    } else {
      out.ca_file = file;
    }
  }
  if (const char* n = std::getenv("DET_MASTER_CERT_NAME"); n != nullptr) out.cert_name = n;
  return out;
}

void HttpClient::SetDefaultTls(const TlsClientOptions& options) {
  std::lock_guard<std::mutex> lock(g_tls_mu);
  g_default_tls = options;
}

TlsClientOptions HttpClient::DefaultTls() {
  std::lock_guard<std::mutex> lock(g_tls_mu);
  if (!g_default_tls) g_default_tls = TlsOptionsFromEnvironment();
  return *g_default_tls;
}

void HttpClient::ConfigureTls(std::string* url) {
  CURL* c = static_cast<CURL*>(curl_);
  error_buffer_[0] = '\0';
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error_buffer_);
  if (url->rfind("https://", 0) != 0) return;
  if (tls_.noverify) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    return;
  }
  if (!tls_.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, tls_.ca_file.c_str());
  if (!tls_.cert_name.empty()) {
    // Ask for the certificate's name and connect to the URL's host: curl then checks the name
    // the operator expects rather than the address used to reach the master.
    CURLU* u = curl_url();
    char* host = nullptr;
    char* port = nullptr;
    if (curl_url_set(u, CURLUPART_URL, url->c_str(), 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK &&
        curl_url_set(u, CURLUPART_HOST, tls_.cert_name.c_str(), 0) == CURLUE_OK) {
      char* rewritten = nullptr;
      if (curl_url_get(u, CURLUPART_URL, &rewritten, 0) == CURLUE_OK) {
        connect_to_ = tls_.cert_name + ":" + port + ":" + host + ":" + port;
        *url = rewritten;
        curl_free(rewritten);
      }
    }
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
  }
}

Status HttpClient::TransportError(const std::string& what, int code) const {
  CURLcode rc = static_cast<CURLcode>(code);
  std::string detail = error_buffer_[0] != '\0' ? error_buffer_ : curl_easy_strerror(rc);
  if (IsTlsFailure(rc)) {
    return FailedPrecondition(
        "cannot verify the TLS certificate of the master at " + base_url_ + ": " + detail +
        " (trust its CA with --cert-file or DET_MASTER_CERT_FILE; DET_MASTER_CERT_NAME if the "
        "certificate names another host)");
  }
  return Unavailable(what + " failed: " + detail);
}

HttpClient::HttpClient(std::string base_url) : base_url_(std::move(base_url)), tls_(DefaultTls()) {
  std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  curl_ = curl_easy_init();
}

HttpClient::~HttpClient() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

Result<HttpResponse> HttpClient::Request(const std::string& method, const std::string& path,
                                         const std::string& body, long timeout_seconds) {
  CURL* c = static_cast<CURL*>(curl_);
  curl_easy_reset(c);
  std::string url = base_url_ + path;
  std::string shown_url = url;
  HttpResponse resp;
  ConfigureTls(&url);
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_seconds);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &resp.body);
  if (method != "GET" || !body.empty()) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  struct curl_slist* connect_to = nullptr;
  if (!connect_to_.empty()) {
    connect_to = curl_slist_append(connect_to, connect_to_.c_str());
    curl_easy_setopt(c, CURLOPT_CONNECT_TO, connect_to);
  }
  struct curl_slist* hdrs = nullptr;
  hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
  hdrs = curl_slist_append(hdrs, "Expect:");
  for (const auto& [k, v] : headers_) hdrs = curl_slist_append(hdrs, (k + ": " + v).c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
  CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(hdrs);
  curl_slist_free_all(connect_to);
  if (rc != CURLE_OK) return TransportError("request " + method + " " + shown_url, rc);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp.status);
  return resp;
}

Result<long> HttpClient::StreamLines(const std::string& path,
                                     const std::function<bool(const std::string&)>& on_line,
                                     long timeout_seconds) {
  CURL* c = static_cast<CURL*>(curl_);
  curl_easy_reset(c);
  std::string url = base_url_ + path;
  std::string shown_url = url;
  LineStream stream{&on_line, "", false};
  ConfigureTls(&url);
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  struct curl_slist* connect_to = nullptr;
  if (!connect_to_.empty()) {
    connect_to = curl_slist_append(connect_to, connect_to_.c_str());
    curl_easy_setopt(c, CURLOPT_CONNECT_TO, connect_to);
  }
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_seconds);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, StreamBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &stream);
  struct curl_slist* hdrs = nullptr;
  for (const auto& [k, v] : headers_) hdrs = curl_slist_append(hdrs, (k + ": " + v).c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
  CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(hdrs);
  curl_slist_free_all(connect_to);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  if (rc != CURLE_OK && !stream.stopped) return TransportError("request GET " + shown_url, rc);
  if (!stream.pending.empty() && !stream.stopped) on_line(stream.pending);
  return status;
}

std::string UrlEncode(const std::string& s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char ch : s) {
    if (isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out.push_back(static_cast<char>(ch));
    } else {
      out.push_back('%');
      out.push_back(kHex[ch >> 4]);
      out.push_back(kHex[ch & 15]);
    }
  }
  return out;
}

}  // namespace det
