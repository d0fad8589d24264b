#include "agent/client/poster.h"

namespace det::agent {

HttpPoster::HttpPoster(std::string base_url, std::string path,
                       std::map<std::string, std::string> headers, long timeout_seconds)
    : base_url_(std::move(base_url)),
      path_(std::move(path)),
      headers_(std::move(headers)),
      timeout_seconds_(timeout_seconds) {}

HttpPoster::~HttpPoster() = default;

Status HttpPoster::Post(const std::string& body) {
  if (client_ == nullptr) {
    client_ = std::make_unique<HttpClient>(base_url_);
    for (const auto& [k, v] : headers_) client_->SetHeader(k, v);
  }
  auto resp = client_->Request("POST", path_, body, timeout_seconds_);
  if (!resp.ok()) return Unavailable(resp.status().message());
  if (resp->status >= 200 && resp->status < 300) return Status::Ok();
  std::string what =
      "POST " + path_ + ": http " + std::to_string(resp->status) + ": " + resp->body.substr(0, 300);
  if (resp->status == 400) return InvalidArgument(what);
  return Unavailable(what);
}

}  // namespace det::agent
