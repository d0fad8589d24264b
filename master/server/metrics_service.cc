#include "master/server/metrics_service.h"

#include <algorithm>
#include <utility>

namespace det::master::server {

MetricsService::MetricsService(store::Store* store, MetricsServiceOptions options)
    : store_(store), options_(std::move(options)) {
  if (options_.start_writer) writer_ = std::thread([this] { WriterLoop(); });
}

MetricsService::~MetricsService() { Stop(); }

void MetricsService::Submit(store::MetricRow row, Done done) {
  {
    MutexLock lock(&mu_);
    if (!stopping_) {
      queue_.push_back(Pending{std::move(row), std::move(done)});
      // A busy writer takes this report with its next batch; waking it costs a system call.
      if (writer_idle_) cv_.notify_one();
      return;
    }
  }
  done(Unavailable("the master is shutting down: metric report of trial " +
                   std::to_string(row.trial_id) + " not stored"));
}

size_t MetricsService::CommitPending() {
  MutexLock commit(&commit_mu_);
  size_t written = 0;
  while (true) {
    std::vector<Pending> batch;
    {
      MutexLock lock(&mu_);
      size_t n = std::min(queue_.size(), std::max<size_t>(options_.max_batch_rows, 1));
      if (n == 0) break;
      batch.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    if (options_.before_commit) options_.before_commit(batch.size());
    std::vector<store::MetricRow> rows;
    rows.reserve(batch.size());
    for (Pending& p : batch) rows.push_back(std::move(p.row));
    std::vector<Status> results = store_->AddMetricsBatch(rows);
    if (results.size() != rows.size()) {
      results.assign(rows.size(),
                     Internal("metrics store answered " + std::to_string(results.size()) +
                              " results for " + std::to_string(rows.size()) + " reports"));
    }
    int64_t failed =
        std::count_if(results.begin(), results.end(), [](const Status& st) { return !st.ok(); });
    {
      MutexLock lock(&mu_);
      stats_.batches += 1;
      stats_.rows += static_cast<int64_t>(rows.size());
      stats_.failed += failed;
      stats_.max_batch = std::max<int64_t>(stats_.max_batch, static_cast<int64_t>(rows.size()));
    }
    // Answered after the commit and outside every lock: a callback may take other locks.
    for (size_t i = 0; i < batch.size(); ++i) batch[i].done(std::move(results[i]));
    written += batch.size();
  }
  return written;
}

void MetricsService::WriterLoop() {
  while (true) {
    {
      MutexLock lock(&mu_);
      while (queue_.empty() && !stopping_) {
        writer_idle_ = true;
        cv_.wait(mu_);
        writer_idle_ = false;
      }
      if (queue_.empty()) return;  // stopping, and everything is answered
    }
    CommitPending();
  }
}

void MetricsService::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (writer_.joinable()) writer_.join();
  // Without a writer (or reports queued just before stopping_ was set): answer them here.
  CommitPending();
}

MetricsService::Stats MetricsService::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

size_t MetricsService::queued() const {
  MutexLock lock(&mu_);
  return queue_.size();
}

}  // namespace det::master::server
