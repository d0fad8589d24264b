#include "common/http_client.h"

#include <curl/curl.h>

#include <mutex>

namespace det {
namespace {

std::once_flag g_curl_init;

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

HttpClient::HttpClient(std::string base_url) : base_url_(std::move(base_url)) {
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
  HttpResponse resp;
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
  struct curl_slist* hdrs = nullptr;
  hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
  hdrs = curl_slist_append(hdrs, "Expect:");
  for (const auto& [k, v] : headers_) hdrs = curl_slist_append(hdrs, (k + ": " + v).c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
  CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(hdrs);
  if (rc != CURLE_OK) {
    return Unavailable("request " + method + " " + url + " failed: " + curl_easy_strerror(rc));
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp.status);
  return resp;
}

Result<long> HttpClient::StreamLines(const std::string& path,
                                     const std::function<bool(const std::string&)>& on_line,
                                     long timeout_seconds) {
  CURL* c = static_cast<CURL*>(curl_);
  curl_easy_reset(c);
  std::string url = base_url_ + path;
  LineStream stream{&on_line, "", false};
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
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
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  if (rc != CURLE_OK && !stream.stopped) {
    return Unavailable("request GET " + url + " failed: " + curl_easy_strerror(rc));
  }
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
