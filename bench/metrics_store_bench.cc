// metrics_store_bench: the metric writer alone, without HTTP: SqliteStore::AddMetricsBatch (what
// MetricsService's writer thread calls) with --trials trials each reporting once per batch (as
// 1,000 trials at 10 Hz do, ~100 ms of reports per batch), for --batches batches. On fresh
// databases in one run: SQLite's checkpoints inside the commits (its default; the master before
// issue #13) as the baseline, then on the WalCheckpointer thread. Prints the writer's CPU per
// report (its own thread), the process's CPU per report (with the checkpointer) and the time of
// each batch (p50, p99, max): what a report waits for once its batch starts.
//
// Usage: metrics_store_bench [--trials 1000] [--batches 300] [--synchronous full|normal]
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "master/store/sqlite/sqlite_store.h"

namespace {

using det::master::store::SqliteOptions;
using det::master::store::SqliteStore;

double CpuSeconds(int who) {
  rusage u{};
  getrusage(who, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct Result {
  double thread_us_per_report = 0;
  double process_us_per_report = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  double reports_per_s = 0;
};

// Makes the store with `trials` trials (synchronous=normal: setup is not measured).
std::vector<int64_t> Setup(const std::string& path, int trials) {
  auto opened = SqliteStore::Open(path, SqliteOptions{.synchronous = SqliteOptions::Synchronous::kNormal});
  if (!opened.ok()) {
    std::fprintf(stderr, "open: %s\n", opened.status().ToString().c_str());
    std::exit(1);
  }
  auto& store = *opened;
  (void)store->EnsureBuiltinUsers(std::nullopt);
  det::master::store::ExperimentRow e;
  e.state = "ACTIVE";
  e.config = {{"name", "metrics-store-bench"}};
  e.owner_id = 1;
  int64_t exp = store->InsertExperiment(e, "tgz").value();
  std::vector<int64_t> ids;
  for (int i = 0; i < trials; ++i) {
    det::master::store::TrialRow t;
    t.experiment_id = exp;
    t.request_id = "r" + std::to_string(i);
    t.hparams = nlohmann::json::object();
    t.state = "ACTIVE";
    ids.push_back(store->InsertTrial(t).value());
  }
  return ids;
}

Result Run(const std::filesystem::path& dir, int trials, int batches,
           SqliteOptions::Synchronous sync, bool background) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "determined.db").string();
  std::vector<int64_t> ids = Setup(path, trials);
  auto opened = SqliteStore::Open(
      path, SqliteOptions{.synchronous = sync, .background_checkpoints = background});
  if (!opened.ok()) std::exit(1);
  auto& store = *opened;
  std::vector<double> ms;
  const double t0 = CpuSeconds(RUSAGE_THREAD);
  const double p0 = CpuSeconds(RUSAGE_SELF);
  const auto w0 = std::chrono::steady_clock::now();
  std::vector<det::master::store::MetricRow> rows(ids.size());
  for (int b = 0; b < batches; ++b) {
    for (size_t i = 0; i < ids.size(); ++i) {
      auto& m = rows[i];
      m.trial_id = ids[i];
      m.trial_run_id = 1;
      m.total_batches = b + 1;
      m.group = "training";
      m.metrics = {{"avg_metrics", {{"loss", 1.0 / (b + 1)}, {"accuracy", 0.9}}}};
      m.report_time = 1000 + b;
    }
    auto start = std::chrono::steady_clock::now();
    std::vector<det::Status> results = store->AddMetricsBatch(rows);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
    for (const auto& st : results) {
      if (!st.ok()) {
        std::fprintf(stderr, "report failed: %s\n", st.ToString().c_str());
        std::exit(1);
      }
    }
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  const double n = static_cast<double>(batches) * static_cast<double>(ids.size());
  Result r;
  r.thread_us_per_report = (CpuSeconds(RUSAGE_THREAD) - t0) / n * 1e6;
  r.process_us_per_report = (CpuSeconds(RUSAGE_SELF) - p0) / n * 1e6;
  std::sort(ms.begin(), ms.end());
  r.p50_ms = ms[ms.size() / 2];
  r.p99_ms = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
  r.max_ms = ms.back();
  r.reports_per_s = n / wall;
  store.reset();
  std::filesystem::remove_all(dir);
  return r;
}

void Print(const char* name, const Result& r) {
  std::printf(
      "%-34s %8.0f reports/s  writer CPU %5.1f us/report (process %5.1f)  batch p50 %6.1f ms  "
      "p99 %6.1f ms  max %6.1f ms\n",
      name, r.reports_per_s, r.thread_us_per_report, r.process_us_per_report, r.p50_ms, r.p99_ms,
      r.max_ms);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"metric writer: batches of one report per trial"};
  int trials = 1000;
  int batches = 300;
  std::string sync = "full";
  std::string dir = (std::filesystem::temp_directory_path() / "det-metrics-store-bench").string();
  app.add_option("--trials", trials, "trials, one report each per batch");
  app.add_option("--batches", batches, "batches written");
  app.add_option("--synchronous", sync, "full | normal")->check(CLI::IsMember({"full", "normal"}));
  app.add_option("--dir", dir, "scratch directory (removed)");
  CLI11_PARSE(app, argc, argv);
  auto s = sync == "full" ? SqliteOptions::Synchronous::kFull : SqliteOptions::Synchronous::kNormal;
  std::printf("%d trials x %d batches, synchronous=%s\n", trials, batches, sync.c_str());
  Result base = Run(dir, trials, batches, s, /*background=*/false);
  Print("baseline: checkpoints in commits", base);
  Result bg = Run(dir, trials, batches, s, /*background=*/true);
  Print("checkpoints on their own thread", bg);
  std::printf("ratio batch p99 background/baseline: %.2f, max: %.2f; writer CPU: %.2f\n",
              bg.p99_ms / base.p99_ms, bg.max_ms / base.max_ms,
              bg.thread_us_per_report / base.thread_us_per_report);
  return 0;
}
