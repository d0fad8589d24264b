// searcher_persist_bench: what persisting the searcher costs per event at 10,000 adaptive_asha
// trials, with a real SQLite store in a temporary directory.
//
// Ours: SearcherJournalService (a journal record per event, a full snapshot when the journal
// passes the snapshot's size). Baseline, same run: the full snapshot after every event that the
// master wrote before (its size is sampled every 500 events and integrated over the search:
// writing it 33,000 times would take hours). Prints bytes per event for both and the ratio, and
// the CPU time per Persist call (the per-trial diff included): the same search run twice, once
// diffing every trial (Persist, the baseline) and once only the trials marked dirty
// (PersistChanged, as the master does).
//
// Usage: searcher_persist_bench [trials]   (default 10000)

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "master/config/experiment_config.h"
#include "master/searcher/journaled_searcher.h"
#include "master/server/searcher_journal_service.h"
#include "master/store/sqlite/sqlite_store.h"

namespace {

namespace s = det::master::searcher;
using det::master::server::SearcherHeader;
using det::master::server::SearcherJournalService;
using det::master::server::SearcherTrialState;

double CpuNow() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  int trials_wanted = argc > 1 ? std::atoi(argv[1]) : 10000;
  std::string yaml =
      "entrypoint: model_def:Trial\nhyperparameters:\n"
      "  lr: {type: log, minval: -5, maxval: -1, base: 10}\n"
      "  layers: {type: int, minval: 1, maxval: 8}\n"
      "searcher: {name: adaptive_asha, metric: loss, max_length: {batches: 100000}, "
      "max_trials: " +
      std::to_string(trials_wanted) + ", max_concurrent_trials: 64}\n";
  auto cfg = det::master::config::ParseExperimentConfig(yaml, {});
  if (!cfg.ok()) return 2;
  auto dir = std::filesystem::temp_directory_path() /
             ("det-searcher-persist-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto opened = det::master::store::SqliteStore::Open((dir / "determined.db").string());
  if (!opened.ok()) return 2;
  std::unique_ptr<det::master::store::Store> store = std::move(opened).value();
  if (!store->EnsureBuiltinUsers(std::nullopt).ok()) return 2;  // the experiment's owner
  det::master::store::ExperimentRow row;
  row.state = "ACTIVE";
  row.config = cfg->defaulted;
  row.owner_id = 1;
  row.snapshot = nlohmann::json::object();
  double cpu_full_scan = 0;  // the same run with the diff of every trial (the baseline)
  for (bool dirty_only : {false, true}) {
    auto exp_id = store->InsertExperiment(row, "");
    if (!exp_id.ok()) {
      std::fprintf(stderr, "insert: %s\n", exp_id.status().ToString().c_str());
      return 2;
    }
    SearcherJournalService::Options options;
    options.verify_dirty = false;  // the check is O(n): tests only
    SearcherJournalService journal(store.get(), options);
    std::set<std::string> dirty;  // as the master marks them (TrialRuntime::MutableSearcher)
    s::JournaledSearcher searcher(std::move(s::Searcher::Create(*cfg)).value());

    // The master's per-trial bookkeeping, kept the way it keeps it.
    std::vector<std::pair<std::string, SearcherTrialState>> states;
    std::unordered_map<std::string, size_t> index;
    std::map<std::string, size_t> sorted;
    std::vector<size_t> runnable;
    std::deque<s::Action> queue;
    SearcherHeader header;
    std::mt19937 order(1);
    int64_t events = 0;
    double persist_cpu = 0, baseline_bytes = 0, last_full = 0;
    auto persist = [&] {
      ++events;
      double t0 = CpuNow();
      det::Status st;
      if (dirty_only) {
        SearcherJournalService::Trials changed;
        changed.reserve(dirty.size());
        for (const std::string& rid : dirty)
          changed.emplace_back(rid, states[index.at(rid)].second);
        auto all = [&] {
          SearcherJournalService::Trials views;
          for (const auto& [rid, at] : sorted) views.emplace_back(rid, states[at].second);
          return views;
        };
        st = journal.PersistChanged(*exp_id, searcher, header, std::move(changed), all);
        dirty.clear();
      } else {
        SearcherJournalService::Trials views;  // by request id, as the master's map iterates
        views.reserve(states.size());
        for (const auto& [rid, at] : sorted) views.emplace_back(rid, states[at].second);
        st = journal.Persist(*exp_id, searcher, header, std::move(views));
      }
      persist_cpu += CpuNow() - t0;
      if (!st.ok()) {
        std::fprintf(stderr, "persist: %s\n", st.ToString().c_str());
        std::exit(1);
      }
      if (events % 500 == 1) {  // the old full snapshot's size, sampled
        nlohmann::json trials = nlohmann::json::object();
        for (const auto& [rid, t] : states) trials[rid] = t.ToJson();
        last_full = static_cast<double>(nlohmann::json{
            {"initialized", true}, {"searcher", searcher.Snapshot()}, {"trials", trials}}
                                            .dump()
                                            .size());
      }
      baseline_bytes += last_full;
    };
    auto absorb = [&](std::vector<s::Action> actions) {
      for (auto& a : actions) queue.push_back(std::move(a));
    };
    header.initialized = true;
    absorb(searcher.InitialOperations());
    persist();
    for (;;) {
      while (!queue.empty()) {
        s::Action a = std::move(queue.front());
        queue.pop_front();
        if (auto* c = std::get_if<s::CreateAction>(&a)) {
          index[c->request_id] = states.size();
          sorted[c->request_id] = states.size();
          states.emplace_back(c->request_id, SearcherTrialState{});
          dirty.insert(c->request_id);
          absorb(searcher.TrialCreated(c->request_id));
          persist();
        } else if (auto* v = std::get_if<s::ValidateAfterAction>(&a)) {
          size_t t = index.at(v->request_id);
          states[t].second.ops.push_back(v->length);
          dirty.insert(v->request_id);
          runnable.push_back(t);
        } else if (auto* cl = std::get_if<s::CloseAction>(&a)) {
          size_t t = index.at(cl->request_id);
          states[t].second.closed = true;
          states[t].second.ops.clear();
          states[t].second.searcher_exited = true;
          dirty.insert(cl->request_id);
          absorb(searcher.TrialExited(cl->request_id));
          persist();
        } else if (auto* sd = std::get_if<s::ShutdownAction>(&a)) {
          header.shutdown = *sd;
        }
      }
      if (runnable.empty()) break;
      std::uniform_int_distribution<size_t> pick(0, runnable.size() - 1);
      size_t at = pick(order);
      size_t t = runnable[at];
      runnable[at] = runnable.back();
      runnable.pop_back();
      auto& st = states[t].second;
      if (st.ops.empty()) continue;
      uint64_t length = st.ops.front();
      st.ops.erase(st.ops.begin());
      st.completed_op = length;
      dirty.insert(states[t].first);
      double metric = static_cast<double>((t * 7919) % 1000);
      absorb(std::move(searcher.ValidationCompleted(states[t].first, metric, length)).value());
      persist();
    }
    // The writer stores what Persist queued; its bytes are counted once stored.
    if (det::Status st = journal.Flush(); !st.ok()) {
      std::fprintf(stderr, "persist: %s\n", st.ToString().c_str());
      return 1;
    }
    if (!dirty_only) {
      cpu_full_scan = 1e6 * persist_cpu / static_cast<double>(events);
      continue;
    }
    auto stats = journal.stats();
    double ours = static_cast<double>(stats.record_bytes + stats.full_bytes);
    std::printf(
        "searcher_persist_bench: adaptive_asha %zu trials, %lld events (persist calls)\n"
        "  baseline (full snapshot after every event): %.0f bytes/event (%.1f MB in all)\n"
        "  ours (journal + full snapshot when it passes the snapshot's size): %.0f bytes/event "
        "(%lld records, %.0f bytes/record; %lld full snapshots, %.1f MB)\n"
        "  bytes written per event: ratio %.4f (%.0fx fewer)\n"
        "  CPU per Persist on the calling thread (the SQLite insert is the writer thread's): "
        "baseline (diff of every trial) %.1f us, ours (diff of the dirty trials) %.1f us, "
        "ratio %.3f (%.1fx faster)\n",
        states.size(), static_cast<long long>(events), baseline_bytes / static_cast<double>(events),
        baseline_bytes / 1e6, ours / static_cast<double>(events),
        static_cast<long long>(stats.records),
        stats.records ? static_cast<double>(stats.record_bytes) / static_cast<double>(stats.records)
                      : 0.0,
        static_cast<long long>(stats.full_snapshots), static_cast<double>(stats.full_bytes) / 1e6,
        ours / baseline_bytes, baseline_bytes / ours, cpu_full_scan,
        1e6 * persist_cpu / static_cast<double>(events),
        1e6 * persist_cpu / static_cast<double>(events) / cpu_full_scan,
        cpu_full_scan / (1e6 * persist_cpu / static_cast<double>(events)));
  }
  store.reset();
  std::filesystem::remove_all(dir);
  return 0;
}
