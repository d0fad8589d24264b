// metrics_load: load for the metric ingestion benchmarks, on Boost.Asio so that one process
// drives many keep-alive connections with little CPU (the server shares the machine).
//
//   --mode closed: each of --connections sends requests back to back for --seconds.
//   --mode paced:  each connection is one simulated trial sending one request every 1/--hz
//                  seconds for --seconds; latency counts from the moment a request was due, so a
//                  slow answer also delays (and charges) the requests queued behind it.
//
// --target metrics posts Determined's POST /api/v1/trials/{id}/metrics (training group) with a
// step unique to each request: connection c reports for trial --trial-ids[c % n] and its k-th
// report has stepsCompleted --first-step + --step-base*(c / n) + k, so no two requests merge in
// the store.
// --target info sends GET /info. With --ack-file, every acknowledged report is written there as
// "trial step" lines (to check after a kill -9). Prints one JSON line.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string host = "127.0.0.1";
  std::string port;
  std::string mode = "closed";
  std::string target = "metrics";
  std::string token;
  std::vector<int64_t> trial_ids;
  int64_t run_id = 1;
  int64_t first_step = 0;
  int64_t step_base = 1000000000;
  int connections = 64;
  int threads = 1;
  double seconds = 5;
  double hz = 10;
  std::string ack_file;
};

struct Totals {
  std::mutex mu;
  int64_t sent = 0;
  int64_t ok = 0;
  int64_t errors = 0;
  std::string first_error;
  std::vector<int64_t> latencies_us;               // paced mode
  std::vector<std::pair<int64_t, int64_t>> acked;  // (trial, step) with --ack-file
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(net::io_context& ioc, const Options& opt, const tcp::resolver::results_type& ep,
             int index, Clock::time_point start, Clock::time_point end, Totals* totals)
      : opt_(opt),
        endpoints_(ep),
        stream_(ioc),
        timer_(ioc),
        index_(index),
        start_(start),
        end_(end),
        totals_(totals) {
    size_t n = std::max<size_t>(opt.trial_ids.size(), 1);
    trial_id_ = opt.trial_ids.empty() ? 0 : opt.trial_ids[index % n];
    step_offset_ = opt.first_step + opt.step_base * (index / static_cast<int64_t>(n));
    period_ =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / opt.hz));
    // Simulated trials do not report in lockstep: spread their phases over one period.
    phase_ = period_ * index / std::max(opt.connections, 1);
  }

  void Start() {
    stream_.async_connect(endpoints_,
                          [self = shared_from_this()](beast::error_code ec, const tcp::endpoint&) {
                            if (ec) return self->Fail("connect: " + ec.message());
                            self->stream_.socket().set_option(tcp::no_delay(true));
                            self->Next();
                          });
  }

  void Finish() {
    std::lock_guard<std::mutex> lock(totals_->mu);
    totals_->sent += sent_;
    totals_->ok += ok_;
    totals_->errors += errors_;
    if (totals_->first_error.empty()) totals_->first_error = first_error_;
    totals_->latencies_us.insert(totals_->latencies_us.end(), latencies_.begin(), latencies_.end());
    totals_->acked.insert(totals_->acked.end(), acked_.begin(), acked_.end());
  }

 private:
  void Next() {
    Clock::time_point now = Clock::now();
    if (opt_.mode == "paced") {
      due_ = start_ + phase_ + period_ * sent_;
      if (due_ >= end_) return Finish();
      if (due_ > now) {
        timer_.expires_at(due_);
        timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
          if (ec) return self->Fail("timer: " + ec.message());
          self->Send();
        });
        return;
      }
    } else {
      if (now >= end_) return Finish();
      due_ = now;
    }
    Send();
  }

  void Send() {
    step_ = step_offset_ + sent_ + 1;
    req_ = {};
    req_.version(11);
    req_.keep_alive(true);
    req_.set(http::field::host, opt_.host);
    if (opt_.target == "info") {
      req_.method(http::verb::get);
      req_.target("/info");
    } else {
      req_.method(http::verb::post);
      req_.target("/api/v1/trials/" + std::to_string(trial_id_) + "/metrics");
      req_.set(http::field::authorization, "Bearer " + opt_.token);
      req_.set(http::field::content_type, "application/json");
      req_.body() =
          "{\"group\":\"training\",\"metrics\":{\"trialId\":" + std::to_string(trial_id_) +
          ",\"trialRunId\":" + std::to_string(opt_.run_id) +
          ",\"stepsCompleted\":" + std::to_string(step_) +
          ",\"metrics\":{\"avgMetrics\":{\"loss\":0.25,\"accuracy\":0.9}}}}";
    }
    req_.prepare_payload();
    ++sent_;
    http::async_write(stream_, req_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->Fail("write: " + ec.message());
      self->res_ = {};
      http::async_read(self->stream_, self->buffer_, self->res_,
                       [self](beast::error_code ec, size_t) { self->OnResponse(ec); });
    });
  }

  void OnResponse(beast::error_code ec) {
    if (ec) return Fail("read: " + ec.message());
    if (res_.result_int() != 200) {
      ++errors_;
      if (first_error_.empty()) {
        first_error_ = std::to_string(res_.result_int()) + " " + res_.body();
      }
    } else {
      ++ok_;
      if (!opt_.ack_file.empty()) acked_.emplace_back(trial_id_, step_);
      if (opt_.mode == "paced") {
        latencies_.push_back(
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - due_).count());
      }
    }
    Next();
  }

  // The connection ends here (a kill -9 of the server ends every connection so).
  void Fail(const std::string& what) {
    ++errors_;
    if (first_error_.empty()) first_error_ = what;
    Finish();
  }

  const Options& opt_;
  const tcp::resolver::results_type& endpoints_;
  beast::tcp_stream stream_;
  net::steady_timer timer_;
  int index_;
  Clock::time_point start_, end_, due_;
  Clock::duration period_, phase_;
  Totals* totals_;
  int64_t trial_id_ = 0;
  int64_t step_offset_ = 0;
  int64_t step_ = 0;
  int64_t sent_ = 0, ok_ = 0, errors_ = 0;
  std::string first_error_;
  std::vector<int64_t> latencies_;
  std::vector<std::pair<int64_t, int64_t>> acked_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> req_;
  http::response<http::string_body> res_;
};

double Percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t i = static_cast<size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return static_cast<double>(sorted[std::min(i, sorted.size() - 1)]) / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"metrics_load: metric report load over keep-alive connections"};
  Options opt;
  app.add_option("--host", opt.host, "server address");
  app.add_option("--port", opt.port, "server port")->required();
  app.add_option("--mode", opt.mode, "closed | paced")->check(CLI::IsMember({"closed", "paced"}));
  app.add_option("--target", opt.target, "metrics | info")
      ->check(CLI::IsMember({"metrics", "info"}));
  app.add_option("--token", opt.token, "user token (Bearer) for metric reports");
  app.add_option("--trial-ids", opt.trial_ids, "trials to report for, spread over connections")
      ->delimiter(',');
  app.add_option("--run-id", opt.run_id, "trialRunId of every report");
  app.add_option("--first-step", opt.first_step, "added to every step");
  app.add_option("--step-base", opt.step_base, "step offset between connections of one trial");
  app.add_option("--connections", opt.connections, "keep-alive connections");
  app.add_option("--threads", opt.threads, "client io threads");
  app.add_option("--seconds", opt.seconds, "duration");
  app.add_option("--hz", opt.hz, "paced mode: requests per second per connection");
  app.add_option("--ack-file", opt.ack_file, "write each acknowledged report as 'trial step'");
  CLI11_PARSE(app, argc, argv);
  if (opt.target == "metrics" && (opt.trial_ids.empty() || opt.token.empty())) {
    std::fprintf(stderr, "--target metrics needs --trial-ids and --token\n");
    return 2;
  }

  net::io_context ioc;
  tcp::resolver resolver(ioc);
  beast::error_code ec;
  auto endpoints = resolver.resolve(opt.host, opt.port, ec);
  if (ec) {
    std::fprintf(stderr, "resolve %s:%s: %s\n", opt.host.c_str(), opt.port.c_str(),
                 ec.message().c_str());
    return 2;
  }
  Totals totals;
  auto start = Clock::now();
  auto end = start + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(opt.seconds));
  for (int i = 0; i < opt.connections; ++i) {
    std::make_shared<Connection>(ioc, opt, endpoints, i, start, end, &totals)->Start();
  }
  std::vector<std::thread> threads;
  for (int t = 1; t < opt.threads; ++t) threads.emplace_back([&ioc] { ioc.run(); });
  ioc.run();
  for (auto& th : threads) th.join();
  double secs = std::chrono::duration<double>(Clock::now() - start).count();

  if (!opt.ack_file.empty()) {
    std::ofstream out(opt.ack_file);
    for (const auto& [trial, step] : totals.acked) out << trial << ' ' << step << '\n';
  }
  std::vector<int64_t>& lat = totals.latencies_us;
  std::sort(lat.begin(), lat.end());
  std::printf(
      "{\"sent\": %lld, \"ok\": %lld, \"errors\": %lld, \"seconds\": %.3f, \"rps\": %.1f, "
      "\"p50_ms\": %.3f, \"p99_ms\": %.3f, \"max_ms\": %.3f}\n",
      static_cast<long long>(totals.sent), static_cast<long long>(totals.ok),
      static_cast<long long>(totals.errors), secs, static_cast<double>(totals.ok) / secs,
      Percentile(lat, 0.5), Percentile(lat, 0.99), lat.empty() ? 0.0 : lat.back() / 1000.0);
  if (!totals.first_error.empty()) {
    std::fprintf(stderr, "first error: %s\n", totals.first_error.c_str());
  }
  return totals.errors == 0 ? 0 : 1;
}
