#pragma once
// Poster: sends one JSON body to one master endpoint. The log shipper and the event sender talk
// to the master through it, so tests can substitute a fake.

#include <map>
#include <memory>
#include <string>

#include "common/http_client.h"
#include "common/status.h"

namespace det::agent {

class Poster {
 public:
  virtual ~Poster() = default;
  // Ok on 2xx. InvalidArgument when the master rejected the body (400: retrying cannot help);
  // Unavailable for anything worth retrying (transport errors, 404, 5xx, ...).
  virtual Status Post(const std::string& body) = 0;
};

// POSTs to base_url + path with extra headers. Owns one HttpClient, created on first use, so an
// HttpPoster belongs to the thread that posts through it.
class HttpPoster : public Poster {
 public:
  HttpPoster(std::string base_url, std::string path, std::map<std::string, std::string> headers,
             long timeout_seconds = 30);
  ~HttpPoster() override;
  Status Post(const std::string& body) override;

 private:
  std::string base_url_;
  std::string path_;
  std::map<std::string, std::string> headers_;
  long timeout_seconds_;
  std::unique_ptr<HttpClient> client_;
};

// The header trial processes authenticate with.
inline std::map<std::string, std::string> AllocationTokenHeaders(const std::string& token) {
  return {{"Grpc-Metadata-x-allocation-token", "Bearer " + token}};
}

}  // namespace det::agent
