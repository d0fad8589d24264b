#pragma once
// MetricsService: the ingestion path of trials' metric reports. Reports arrive already checked
// (principal, trial and run, in memory) and are queued; one writer thread commits them in
// batches: every report that arrived while the previous commit ran goes into the next
// transaction (group commit), so one commit and one sync serve a whole batch. Each report's
// callback runs only after its transaction committed, so an answered report survives kill -9 of
// the master. No request thread waits meanwhile (the HTTP answer is deferred), and nothing here
// waits for the runtime loop.
//
// The queue needs no cap of its own: each HTTP connection has at most one request in flight and
// the server caps connections, so at most max_connections reports wait here.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "common/status.h"
#include "common/thread_annotations.h"
#include "master/store/store.h"

namespace det::master::server {

struct MetricsServiceOptions {
  // A transaction holds at most this many reports, which bounds the latency one commit adds.
  size_t max_batch_rows = 4096;
  // False: no writer thread; the owner commits with CommitPending() (tests drive batches so).
  bool start_writer = true;
  // Runs on the writer just before each batch is written, with its size (tests hold the writer
  // here to let reports pile up behind a commit).
  std::function<void(size_t batch_rows)> before_commit;
};

class MetricsService {
 public:
  // Called once with the report's outcome, on the writer thread (or the caller's, after Stop):
  // it must only hand the result on (e.g. answer an HTTP request), never wait for other reports.
  using Done = std::function<void(Status)>;

  struct Stats {
    int64_t batches = 0;    // transactions committed (or failed)
    int64_t rows = 0;       // reports written, successfully or not
    int64_t failed = 0;     // reports answered with an error
    int64_t max_batch = 0;  // the largest batch so far
  };

  explicit MetricsService(store::Store* store, MetricsServiceOptions options = {});
  ~MetricsService();
  MetricsService(const MetricsService&) = delete;
  MetricsService& operator=(const MetricsService&) = delete;

  // Queues `row`; `done` runs once it is committed or failed. After Stop it answers Unavailable
  // at once.
  void Submit(store::MetricRow row, Done done) EXCLUDES(mu_);
  // Writes what is queued now, max_batch_rows per transaction, and answers it; returns how many
  // reports it wrote. The writer thread runs this in a loop; without one, the owner calls it.
  size_t CommitPending() EXCLUDES(mu_, commit_mu_);
  // Commits and answers everything queued, then ends the writer. Later reports are refused.
  // Idempotent.
  void Stop() EXCLUDES(mu_);

  Stats stats() const EXCLUDES(mu_);
  size_t queued() const EXCLUDES(mu_);

 private:
  struct Pending {
    store::MetricRow row;
    Done done;
  };
  void WriterLoop() EXCLUDES(mu_);

  store::Store* const store_;
  const MetricsServiceOptions options_;
  // Serializes CommitPending (the writer thread, or tests calling it) so batches commit in the
  // order their reports were queued.
  Mutex commit_mu_;  // taken before mu_
  mutable Mutex mu_;
  std::condition_variable_any cv_;  // wakes the writer: a report queued, or Stop
  std::deque<Pending> queue_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  bool writer_idle_ GUARDED_BY(mu_) = false;  // the writer waits on cv_
  Stats stats_ GUARDED_BY(mu_);
  std::thread writer_;
};

}  // namespace det::master::server
