// http_load: a small closed-loop HTTP load generator for the benchmarks. N threads each send M
// requests back to back over one keep-alive connection and the run prints a JSON summary.
// `{i}` in the body is replaced by a number unique to each request.
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "common/http_client.h"

int main(int argc, char** argv) {
  CLI::App app{"http_load: closed-loop HTTP load against one endpoint"};
  std::string url, path = "/info", method = "GET", body;
  std::vector<std::string> headers;
  int threads = 16, requests = 200;
  app.add_option("--url", url, "base URL, e.g. http://127.0.0.1:8080")->required();
  app.add_option("--path", path, "request path");
  app.add_option("--method", method, "HTTP method");
  app.add_option("--body", body, "request body; {i} becomes a unique request number");
  app.add_option("--header", headers, "extra header 'Name: value' (repeatable)");
  app.add_option("--threads", threads, "concurrent clients");
  app.add_option("--requests", requests, "requests per client");
  CLI11_PARSE(app, argc, argv);

  std::atomic<int64_t> errors{0};
  std::string first_error;
  std::mutex first_mu;
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      det::HttpClient client(url);
      for (const auto& h : headers) {
        size_t colon = h.find(':');
        if (colon == std::string::npos) continue;
        std::string value = h.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        client.SetHeader(h.substr(0, colon), value);
      }
      for (int k = 0; k < requests; ++k) {
        std::string b = body;
        std::string id = std::to_string(static_cast<int64_t>(t) * requests + k + 1);
        for (size_t p = b.find("{i}"); p != std::string::npos; p = b.find("{i}", p + id.size())) {
          b.replace(p, 3, id);
        }
        auto r = client.Request(method, path, b);
        if (!r.ok() || r->status >= 400) {
          errors++;
          std::lock_guard<std::mutex> lock(first_mu);
          if (first_error.empty()) {
            first_error = r.ok() ? std::to_string(r->status) + " " + r->body : r.status().message();
          }
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int64_t total = static_cast<int64_t>(threads) * requests;
  std::printf("{\"requests\": %lld, \"errors\": %lld, \"seconds\": %.4f, \"rps\": %.1f}\n",
              static_cast<long long>(total), static_cast<long long>(errors.load()), secs,
              static_cast<double>(total) / secs);
  if (!first_error.empty()) std::fprintf(stderr, "first error: %s\n", first_error.c_str());
  return errors.load() == 0 ? 0 : 1;
}
