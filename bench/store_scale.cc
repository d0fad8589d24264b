// store_scale: read latency of the master at 100,000 trials and 10,000,000 metric rows.
//
// Fills a SQLite store through Store::BulkInsert (batched transactions), starts the master and
// its HTTP server in this process on a free loopback port, and measures over HTTP, one request
// at a time on a keep-alive connection, the p50 and p99 latency of: the experiment list (default
// page and a filtered, sorted, deep page), an experiment's trials (paged), one trial, and a
// trial's metric series downsampled for a chart (GET /api/v1/trials/time-series). Baseline: GET
// /info on the same server in the same run. The target is p99 <= 20 ms for each.
//
// Shape of the data (defaults): 10,000 experiments; experiment 1 is a search of 10,000 trials,
// the other 90,000 trials spread over the rest; trial 1 has the long series (1,000,000 rows, a
// validation every 100 steps), the other 9,000,000 rows spread evenly (a tenth validation).
// --scale 0.01 shrinks every count for development. --data-dir keeps the filled store for the
// next run (--reuse); --without-scale-indexes measures once with 0012's indexes dropped, then
// puts them back.
#include <sqlite3.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/http_client.h"
#include "master/api/routes.h"
#include "master/config/experiment_config.h"
#include "master/server/http_server.h"
#include "master/server/master.h"
#include "master/store/migrations.h"
#include "master/store/sqlite/sqlite_store.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace store = det::master::store;

struct Sizes {
  int64_t experiments = 10000;
  int64_t trials = 100000;
  int64_t metric_rows = 10000000;
  int64_t big_experiment_trials = 10000;
  int64_t long_series = 1000000;
};

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "store_scale: %s\n", what.c_str());
  return 1;
}

// The trial ids of experiment `e` (1-based): experiment 1 holds the first
// big_experiment_trials, the rest are spread over experiments 2..N in contiguous ranges.
std::pair<int64_t, int64_t> TrialRange(const Sizes& z, int64_t e) {
  if (e == 1) return {1, z.big_experiment_trials};
  int64_t rest = z.trials - z.big_experiment_trials, n = z.experiments - 1;
  int64_t lo = z.big_experiment_trials + 1 + rest * (e - 2) / n;
  int64_t hi = z.big_experiment_trials + rest * (e - 1) / n;
  return {lo, hi};
}

det::Status Fill(store::SqliteStore* s, const Sizes& z, const json& base_config) {
  DET_RETURN_IF_ERROR(s->EnsureBuiltinUsers(std::nullopt).status());
  const int64_t admin = s->GetUserByName("admin")->id;
  const int64_t determined = s->GetUserByName("determined")->id;
  // A context directory of a few KB, as a small model's (stored in every experiment row).
  std::string tgz(4096, 'x');
  const int64_t per_trial = (z.metric_rows - z.long_series) / std::max<int64_t>(1, z.trials - 1);
  const char* states[] = {"COMPLETED", "COMPLETED", "COMPLETED", "CANCELED", "ERROR"};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<store::ExperimentRow> exps;
  std::vector<store::TrialRow> trials;
  std::vector<store::MetricRow> metrics;
  const int64_t t0 = 1700000000LL * 1000000;
  auto flush = [&]() -> det::Status {
    DET_RETURN_IF_ERROR(s->BulkInsert(exps, tgz, trials, metrics));
    exps.clear();
    trials.clear();
    metrics.clear();
    return det::Status::Ok();
  };
  int64_t rows_done = 0;
  auto started = Clock::now();
  for (int64_t e = 1; e <= z.experiments; ++e) {
    store::ExperimentRow x;
    x.id = e;
    x.state = states[e % 5];
    x.config = base_config;
    x.config["name"] = "scale-" + std::to_string(e % 997);
    x.config["labels"] = json::array({e % 2 ? "odd" : "even"});
    x.original_config = "name: scale";
    x.owner_id = e % 3 == 0 ? admin : determined;
    x.job_id = "job-" + std::to_string(e);
    x.start_time = t0 + e * 60000000 + static_cast<int64_t>(unit(rng) * 30000000);
    x.end_time = x.start_time + 3600000000LL;
    x.archived = e % 10 == 0;
    x.progress = 1;
    x.snapshot = json::object();
    exps.push_back(std::move(x));
    auto [lo, hi] = TrialRange(z, e);
    for (int64_t t = lo; t <= hi; ++t) {
      store::TrialRow r;
      r.id = t;
      r.experiment_id = e;
      r.request_id = "req-" + std::to_string(t);
      r.seed = t;
      r.hparams = {{"lr", 0.0001 + unit(rng) / 10}, {"layers", 1 + t % 8}};
      r.state = "COMPLETED";
      r.start_time = exps.back().start_time;
      r.end_time = r.start_time + 600000000;
      r.task_id = std::to_string(e) + "." + std::to_string(t);
      const int64_t n = t == 1 ? z.long_series : per_trial;
      const int64_t every = t == 1 ? 100 : 10;  // one validation per `every` rows
      int64_t training = n - n / every;
      r.total_batches = training * 10;
      trials.push_back(std::move(r));
      int64_t steps = 0;
      for (int64_t i = 0; i < n; ++i) {
        store::MetricRow m;
        m.trial_id = t;
        m.report_time = trials.back().start_time + i * 1000000;
        if ((i + 1) % every == 0) {
          m.group = "validation";
          m.total_batches = steps;
          m.metrics = {{"validation_metrics",
                        {{"validation_loss", 1.0 / (1 + steps / 100.0)}, {"accuracy", unit(rng)}}}};
        } else {
          steps += 10;
          m.group = "training";
          m.total_batches = steps;
          m.metrics = {
              {"avg_metrics",
               {{"loss", 2.0 / (1 + steps / 100.0) + unit(rng) / 10}, {"epochs", steps / 1000.0}}}};
        }
        metrics.push_back(std::move(m));
        if (metrics.size() >= 200000) DET_RETURN_IF_ERROR(flush());
        ++rows_done;
      }
    }
    if (trials.size() >= 20000 || exps.size() >= 2000) DET_RETURN_IF_ERROR(flush());
    if (e % 1000 == 0) {
      std::fprintf(stderr, "  filled %lld experiments, %lld metric rows (%.0f s)\n",
                   static_cast<long long>(e), static_cast<long long>(rows_done), Seconds(started));
    }
  }
  return flush();
}

struct Stats {
  double p50 = 0, p99 = 0;
  int64_t errors = 0;
  std::string first_error;
};

// Sends `n` requests (after `n / 10` unmeasured ones) with paths from `path_of(i)`.
Stats Measure(det::HttpClient& client, int n, const std::function<std::string(int)>& path_of) {
  std::vector<double> ms;
  Stats st;
  for (int i = -n / 10; i < n; ++i) {
    std::string path = path_of(i < 0 ? -i : i);
    auto start = Clock::now();
    auto r = client.Request("GET", path);
    double took = Seconds(start) * 1000;
    if (!r.ok() || r->status != 200) {
      if (st.errors++ == 0) {
        st.first_error = path + ": " +
                         (r.ok() ? std::to_string(r->status) + " " + r->body.substr(0, 300)
                                 : r.status().ToString());
      }
      continue;
    }
    if (i >= 0) ms.push_back(took);
  }
  if (ms.empty()) return st;
  std::sort(ms.begin(), ms.end());
  auto at = [&ms](double q) {
    size_t k = static_cast<size_t>(q * static_cast<double>(ms.size() - 1) + 0.5);
    return ms[std::min(k, ms.size() - 1)];
  };
  st.p50 = at(0.50);
  st.p99 = at(0.99);
  return st;
}

// 0012's indexes off (and the index they replaced back) or on again.
det::Status SetScaleIndexes(const std::string& db_path, bool on) {
  sqlite3* db = nullptr;
  if (sqlite3_open(db_path.c_str(), &db) != SQLITE_OK) return det::Internal("cannot open db");
  std::string sql;
  if (on) {
    for (const auto& m : store::Migrations()) {
      if (m.version == 12) sql = m.sql;
    }
    // 0021 replaced 0012's name expression index with the name column's, 0023 its owner index
    // with one that covers the name.
    sql += "; DROP INDEX experiments_name; CREATE INDEX experiments_by_name ON experiments(name, "
           "id, owner_id); DROP INDEX experiments_owner; CREATE INDEX experiments_owner_name ON "
           "experiments(owner_id, name);";
  } else {
    sql =
        "DROP INDEX experiments_archived; DROP INDEX experiments_archived_start; "
        "DROP INDEX experiments_start_time; DROP INDEX experiments_owner_name; "
        "DROP INDEX experiments_state_archived_start; "
        "DROP INDEX experiments_by_name; DROP INDEX experiment_projects_project; "
        "DROP INDEX trials_experiment_state; DROP INDEX metrics_series; "
        "CREATE INDEX metrics_trial_group ON metrics(trial_id, metric_group, total_batches);";
  }
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  std::string msg = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  return rc == SQLITE_OK ? det::Status::Ok() : det::Internal("sqlite: " + msg);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"store_scale: master read latency at 100,000 trials and 10,000,000 metric rows"};
  Sizes z;
  double scale = 1;
  int requests = 300;
  std::string data_dir;
  bool reuse = false, without_indexes = false, fill_only = false;
  int64_t experiments = 0, trials = 0, metric_rows = 0, long_series = 0, big_exp_trials = 0;
  app.add_option("--scale", scale, "multiply every count (e.g. 0.01 while developing)");
  // Exact counts (after --scale), for other benchmarks that want a store of a given shape
  // (bench/webui_first_paint.py: 100,000 experiments, a 1,000,000-row series).
  app.add_option("--experiments", experiments, "experiments (overrides the scaled count)");
  app.add_option("--trials", trials, "trials in all (overrides)");
  app.add_option("--metric-rows", metric_rows, "metric rows in all (overrides)");
  app.add_option("--long-series", long_series, "rows of trial 1 (overrides)");
  app.add_option("--big-experiment-trials", big_exp_trials, "trials of experiment 1 (overrides)");
  app.add_flag("--fill-only", fill_only, "fill the store in --data-dir and exit (no master)");
  app.add_option("--requests", requests, "measured requests per endpoint");
  std::string only;
  app.add_option("--only", only,
                 "measure only the reads whose name contains this text (and the baseline), e.g. "
                 "to profile one of them");
  app.add_option("--data-dir", data_dir, "keep the store here (default: a temp dir, removed)");
  app.add_flag("--reuse", reuse, "use the store already filled in --data-dir");
  app.add_flag("--without-scale-indexes", without_indexes,
               "measure with 0012_indexes.sql's indexes dropped (they are put back after)");
  CLI11_PARSE(app, argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each figure as soon as it is measured
  auto scaled = [scale](int64_t v) { return std::max<int64_t>(2, std::llround(v * scale)); };
  z = Sizes{scaled(z.experiments), scaled(z.trials), scaled(z.metric_rows),
            scaled(z.big_experiment_trials), scaled(z.long_series)};
  if (experiments > 0) z.experiments = experiments;
  if (trials > 0) z.trials = trials;
  if (metric_rows > 0) z.metric_rows = metric_rows;
  if (long_series > 0) z.long_series = long_series;
  if (big_exp_trials > 0) z.big_experiment_trials = big_exp_trials;
  if (z.trials < z.experiments || z.big_experiment_trials > z.trials - (z.experiments - 1) ||
      z.metric_rows < z.long_series) {
    return Fail("counts: every experiment needs a trial, and trial 1's series fits the rows");
  }
  if (fill_only && data_dir.empty()) return Fail("--fill-only needs --data-dir");

  const bool temp = data_dir.empty();
  if (temp) {
    data_dir =
        (std::filesystem::temp_directory_path() / ("det_store_scale_" + std::to_string(getpid())))
            .string();
  }
  std::filesystem::create_directories(data_dir);
  const std::string db_path = data_dir + "/determined.db";
  std::printf("store_scale: %lld experiments, %lld trials, %lld metric rows (long series %lld)\n",
              static_cast<long long>(z.experiments), static_cast<long long>(z.trials),
              static_cast<long long>(z.metric_rows), static_cast<long long>(z.long_series));
  if (!reuse || !std::filesystem::exists(db_path)) {
    std::filesystem::remove(db_path);
    auto opened = store::SqliteStore::Open(db_path);
    if (!opened.ok()) return Fail(opened.status().ToString());
    auto cfg = det::master::config::ParseExperimentConfig(
        "name: scale\nentrypoint: model_def:Trial\n"
        "searcher: {name: random, metric: validation_loss, max_trials: 10, max_length: 100}\n"
        "hyperparameters: {lr: {type: double, minval: 0.0001, maxval: 0.1}, layers: 4}\n",
        det::master::config::ConfigDefaults{});
    if (!cfg.ok()) return Fail(cfg.status().ToString());
    auto started = Clock::now();
    if (det::Status st = Fill(opened->get(), z, cfg->defaulted); !st.ok()) {
      return Fail("fill: " + st.ToString());
    }
    std::printf("fill: %.1f s (%.0f metric rows/s through Store::BulkInsert)\n", Seconds(started),
                static_cast<double>(z.metric_rows) / Seconds(started));
  }
  if (fill_only) return 0;
  if (without_indexes) {
    auto started = Clock::now();
    if (det::Status st = SetScaleIndexes(db_path, false); !st.ok()) return Fail(st.ToString());
    std::printf("0012 indexes dropped for this run (%.1f s)\n", Seconds(started));
  }

  auto opened = store::SqliteStore::Open(db_path);
  if (!opened.ok()) return Fail(opened.status().ToString());
  det::master::server::MasterConfig config;
  config.data_dir = data_dir;
  config.db_path = db_path;
  config.port = 0;
  if (det::Status st = det::master::server::FinalizeMasterConfig(&config); !st.ok()) {
    return Fail(st.ToString());
  }
  det::SystemClock clock;
  det::master::server::Master master(config, std::move(opened).value(), &clock);
  if (det::Status st = master.Start(); !st.ok()) return Fail(st.ToString());
  det::master::server::Router router;
  det::master::api::RegisterRoutes(&router, &master);
  det::master::server::HttpServer server("127.0.0.1", 0, &router);
  if (det::Status st = server.Start(); !st.ok()) return Fail(st.ToString());
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());

  det::HttpClient client(url);
  auto login =
      client.Request("POST", "/api/v1/auth/login", R"({"username": "determined", "password": ""})");
  if (!login.ok() || login->status != 200) return Fail("login failed");
  client.SetHeader("Authorization",
                   "Bearer " + json::parse(login->body)["token"].get<std::string>());

  std::mt19937_64 rng(11);
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const int64_t big_trials = z.big_experiment_trials;
  const int64_t long_trial = 1;
  struct Case {
    std::string name;
    std::function<std::string(int)> path;
  };
  std::vector<Case> cases = {
      {"GET /info (baseline)", [](int) { return std::string("/info"); }},
      {"list experiments ?limit=10",
       [](int) { return std::string("/api/v1/experiments?limit=10"); }},
      {"list experiments: unarchived COMPLETED by start time desc, deep page",
       [&](int) {
         return "/api/v1/experiments?limit=10&archived=false&states=STATE_COMPLETED"
                "&sortBy=SORT_BY_START_TIME&orderBy=ORDER_BY_DESC&offset=" +
                std::to_string(pick(0, z.experiments / 3));
       }},
      {"list experiments: user and name filter, sorted by name",
       [&](int) {
         return "/api/v1/experiments?limit=10&users=admin&name=scale-1&sortBy=SORT_BY_NAME"
                "&orderBy=ORDER_BY_ASC&offset=" +
                std::to_string(pick(0, 20));
       }},
      {"list trials of the 10,000-trial experiment, limit=10",
       [&](int) {
         return "/api/v1/experiments/1/trials?limit=10&offset=" +
                std::to_string(pick(0, big_trials - 10));
       }},
      {"list trials of the 10,000-trial experiment, limit=100",
       [&](int) {
         return "/api/v1/experiments/1/trials?limit=100&offset=" +
                std::to_string(pick(0, big_trials - 100));
       }},
      {"one trial (random)",
       [&](int) { return "/api/v1/trials/" + std::to_string(pick(2, z.trials)); }},
      {"one trial (the one with the long series)",
       [&](int) { return "/api/v1/trials/" + std::to_string(long_trial); }},
      {"time-series: long series, 200 points, training.loss + validation.validation_loss",
       [&](int) {
         return "/api/v1/trials/time-series?trialIds=" + std::to_string(long_trial) +
                "&maxDatapoints=200&metricIds=training.loss&metricIds=validation.validation_loss";
       }},
      {"time-series: a random trial, 200 points, loss",
       [&](int) {
         return "/api/v1/trials/time-series?trialIds=" + std::to_string(pick(2, z.trials)) +
                "&maxDatapoints=200&metricNames=loss&group=training";
       }},
  };
  double baseline_p99 = 0;
  bool all_ok = true;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (i > 0 && !only.empty() && cases[i].name.find(only) == std::string::npos) continue;
    Stats st = Measure(client, requests, cases[i].path);
    if (st.errors > 0) {
      all_ok = false;
      std::printf("%-80s ERRORS %lld (first: %s)\n", cases[i].name.c_str(),
                  static_cast<long long>(st.errors), st.first_error.c_str());
      continue;
    }
    if (i == 0) {
      baseline_p99 = st.p99;
      std::printf("%-80s p50 %7.2f ms  p99 %7.2f ms\n", cases[i].name.c_str(), st.p50, st.p99);
      continue;
    }
    bool met = st.p99 <= 20.0;
    std::printf("%-80s p50 %7.2f ms  p99 %7.2f ms  baseline p99 %.2f ms  ratio %.1fx  %s\n",
                cases[i].name.c_str(), st.p50, st.p99, baseline_p99, st.p99 / baseline_p99,
                met ? "(target p99 <= 20 ms: met)" : "(target p99 <= 20 ms: MISSED)");
  }
  server.Stop();
  master.Stop();
  if (without_indexes) {
    if (det::Status st = SetScaleIndexes(db_path, true); !st.ok()) return Fail(st.ToString());
  }
  if (temp) std::filesystem::remove_all(data_dir);
  // A missed target is a figure to report, not a failure; errors are.
  return all_ok ? 0 : 1;
}
