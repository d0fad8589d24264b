// searcher_bench: the pure searchers driven in-process (no cluster, no store) by a lean driver
// that does O(1) work per event: trials finish their pending operation in a random order (as on
// a cluster with 64 trials running), each reports the searcher metric, and the master's
// Progress() call after every event is made too. For random, grid, async_halving ("asha") and
// adaptive_asha at 1,000 and 10,000 trials it prints the cost per event, decisions per second
// and the growth of the per-event cost from 1,000 to 10,000 trials; then the size and cost of
// one full snapshot at the end of the 10,000-trial adaptive_asha search and a PBT search.
//
// Baseline, measured in the same run: sampling the same number of hyperparameter sets from the
// same space (SampleHyperparameters, what every search does per trial), spread over the same
// events; each search prints its cost per event next to the baseline's and the ratio, i.e. what
// the searcher's own bookkeeping costs on top of drawing its trials. Times are this thread's CPU
// time (CLOCK_THREAD_CPUTIME_ID), so other processes on a shared machine do not count, and each
// figure is the best of nine runs (--runs; the least disturbed one: on a shared machine the
// other processes evict the searcher's working set from the caches at random).
//
// The allocator keeps freed memory as in the master (det::RetainFreedHeap): with glibc's
// defaults each run's large vectors were returned to the kernel and faulted in again by the
// next, a cost that grew with the trial count and is not the searcher's.
//
// Usage: searcher_bench [--quick] [--only NAME] [--runs N]
//   --quick: 1,000 trials only, one run each, no snapshots or PBT
//   --only NAME: only the search whose name starts with NAME (e.g. to profile it)
//   --runs N: the best of N runs per figure (default 9)

#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/heap_retention.h"
#include "master/config/experiment_config.h"
#include "master/searcher/hparam_sampling.h"
#include "master/searcher/nprand.h"
#include "master/searcher/searcher.h"

namespace {

using det::master::config::ConfigDefaults;
using det::master::config::ExperimentConfig;
using det::master::config::ParseExperimentConfig;
namespace s = det::master::searcher;

// Seconds of CPU time used by this thread.
double CpuNow() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

long PeakRssKib() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;  // KiB on Linux
}

constexpr char kSampledSpace[] =
    "  lr: {type: log, minval: -5, maxval: -1, base: 10}\n"
    "  layers: {type: int, minval: 1, maxval: 8}\n"
    "  dropout: {type: double, minval: 0.0, maxval: 0.5}\n"
    "  opt: {type: categorical, vals: [sgd, adam, adamw]}\n";

// A grid of 10^axes points (the remaining axis is a constant).
std::string GridSpace(int axes) {
  std::string space;
  for (int i = 0; i < 4; ++i) {
    std::string name = std::string(1, static_cast<char>('a' + i));
    space += i < axes ? "  " + name + ": {type: double, minval: 0.0, maxval: 1.0, count: 10}\n"
                      : "  " + name + ": 0.5\n";
  }
  return space;
}

ExperimentConfig Parse(const std::string& searcher, const std::string& space) {
  std::string yaml =
      "entrypoint: model_def:Trial\nhyperparameters:\n" + space + "searcher: " + searcher + "\n";
  auto cfg = ParseExperimentConfig(yaml, ConfigDefaults{});
  if (!cfg.ok()) {
    std::fprintf(stderr, "bad config: %s\n", cfg.status().ToString().c_str());
    std::exit(2);
  }
  return *cfg;
}

// The driver's request id -> trial table: open addressing over 16-byte slots keyed by a 64-bit
// hash of the id, so a lookup reads one cache line and never the id's text (the driver's cost
// should not be what grows with the trials). Ids are not compared: two of 10,000 ids share a key
// with odds of about 1e-11, and then the searcher would reject the event and the bench abort.
class DriverIndex {
 public:
  void Add(std::string_view id, uint32_t trial) {
    if (4 * (size_ + 1) > 3 * slots_.size()) Grow();
    Place(Key(id), trial);
    ++size_;
  }
  uint32_t Find(std::string_view id) const {
    uint64_t key = Key(id);
    size_t mask = slots_.size() - 1;
    for (size_t i = key & mask;; i = (i + 1) & mask) {
      if (slots_[i].key == key) return slots_[i].trial;
      if (slots_[i].key == 0) return std::numeric_limits<uint32_t>::max();
    }
  }

 private:
  struct Slot {
    uint64_t key = 0;  // 0: empty
    uint32_t trial = 0;
  };
  static uint64_t Key(std::string_view id) {
    uint64_t h = std::hash<std::string_view>{}(id);
    return h == 0 ? 1 : h;
  }
  void Place(uint64_t key, uint32_t trial) {
    size_t mask = slots_.size() - 1;
    size_t i = key & mask;
    while (slots_[i].key != 0) i = (i + 1) & mask;
    slots_[i] = Slot{key, trial};
  }
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : 2 * old.size(), Slot{});
    for (const Slot& s : old) {
      if (s.key != 0) Place(s.key, s.trial);
    }
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

struct Figures {
  double seconds = 0;
  int64_t trials = 0, events = 0, decisions = 0;
  double progress_sink = 0;
};

// The base-2 radical inverse of i + 1: metrics spread evenly over [0, 1) in creation order.
double Spread(uint64_t i) {
  double inv = 0.5, out = 0;
  for (uint64_t n = i + 1; n > 0; n >>= 1, inv /= 2) {
    if (n & 1) out += inv;
  }
  return out;
}

// Runs one search to its end. Work outside the searcher is O(1) per event: a DriverIndex lookup
// by request id (skipped when an action names the trial of the event) and a swap-remove pick
// among the trials with a pending operation. The driver keeps its trials' request ids end to
// end (36 bytes a trial) and copies one into a reused string per call: a vector of strings
// would add a heap block per trial and two cache misses per event that are the driver's, not
// the searcher's.
Figures Drive(const ExperimentConfig& cfg, uint32_t order_seed) {
  // 16 bytes: the driver's own per-trial state should not be what grows with the trials.
  struct Trial {
    uint64_t op = 0;  // the oldest pending length, when has_op
    bool has_op = false;
    bool closed = false;
    bool exited = false;
    int32_t runnable_at = -1;  // index in `runnable`, -1 when absent
  };
  std::unordered_map<uint32_t, std::deque<uint64_t>> more_ops;  // pending after `op` (rare)
  auto searcher = std::move(s::Searcher::Create(cfg)).value();
  std::vector<Trial> trials;
  std::string text;      // every request id, 36 bytes each, in creation order
  std::string id;        // the request id of the current call (capacity reused)
  uint32_t current = 0;  // the trial `id` names
  DriverIndex index;     // request id -> index into `trials`
  auto id_of = [&](uint32_t t) { return std::string_view(text).substr(36 * t, 36); };
  // Most actions name the trial of the event that returned them.
  auto find = [&](const std::string& request_id) {
    return !id.empty() && request_id == id ? current : index.Find(request_id);
  };
  uint32_t oldest_live = 0;  // every trial before it has exited
  std::vector<uint32_t> runnable;
  std::deque<s::Action> queue;
  std::mt19937 order(order_seed);
  Figures f;

  auto drop_runnable = [&](uint32_t t) {
    int32_t at = trials[t].runnable_at;
    if (at < 0) return;
    uint32_t last = runnable.back();
    runnable[static_cast<size_t>(at)] = last;
    trials[last].runnable_at = at;
    runnable.pop_back();
    trials[t].runnable_at = -1;
  };
  auto absorb = [&](std::vector<s::Action> actions) {
    ++f.events;
    f.decisions += static_cast<int64_t>(actions.size());
    f.progress_sink += searcher->Progress();  // the master stores progress after every event
    for (auto& a : actions) queue.push_back(std::move(a));
  };
  auto exit_trial = [&](uint32_t t) {
    if (trials[t].exited) return;
    trials[t].exited = true;
    trials[t].has_op = false;
    more_ops.erase(t);
    drop_runnable(t);
    id.assign(id_of(t));
    current = t;
    absorb(searcher->TrialExited(id));
  };

  double start = CpuNow();
  absorb(searcher->InitialOperations());
  for (;;) {
    while (!queue.empty()) {
      s::Action a = std::move(queue.front());
      queue.pop_front();
      if (auto* c = std::get_if<s::CreateAction>(&a)) {
        if (c->request_id.size() != 36) {
          std::fprintf(stderr, "request id %s is not a UUID\n", c->request_id.c_str());
          std::exit(2);
        }
        index.Add(c->request_id, static_cast<uint32_t>(trials.size()));
        text += c->request_id;
        trials.emplace_back();
        absorb(searcher->TrialCreated(c->request_id));
      } else if (auto* v = std::get_if<s::ValidateAfterAction>(&a)) {
        uint32_t t = find(v->request_id);
        if (trials[t].closed || trials[t].exited) continue;
        if (trials[t].has_op) {
          more_ops[t].push_back(v->length);
        } else {
          trials[t].op = v->length;
          trials[t].has_op = true;
        }
        if (trials[t].runnable_at < 0) {
          trials[t].runnable_at = static_cast<int32_t>(runnable.size());
          runnable.push_back(t);
        }
      } else if (auto* cl = std::get_if<s::CloseAction>(&a)) {
        uint32_t t = find(cl->request_id);
        trials[t].closed = true;
        exit_trial(t);
      }
    }
    if (runnable.empty()) {
      // Nothing owed: a live trial without an operation (random/grid without max_length
      // never happens here) ends on its own; ASHA never leaves one.
      while (oldest_live < trials.size() && trials[oldest_live].exited) ++oldest_live;
      if (oldest_live == trials.size()) break;
      exit_trial(oldest_live);
      continue;
    }
    std::uniform_int_distribution<size_t> pick(0, runnable.size() - 1);
    uint32_t t = runnable[pick(order)];
    uint64_t length = trials[t].op;
    trials[t].has_op = false;
    if (auto more = more_ops.find(t); more != more_ops.end()) {
      trials[t].op = more->second.front();
      trials[t].has_op = true;
      more->second.pop_front();
      if (more->second.empty()) more_ops.erase(more);
    }
    if (!trials[t].has_op) drop_runnable(t);
    id.assign(id_of(t));
    current = t;
    searcher->SetTrialProgress(id, static_cast<double>(length));
    absorb(std::move(searcher->ValidationCompleted(id, Spread(t), length)).value());
  }
  f.seconds = CpuNow() - start;
  f.trials = static_cast<int64_t>(trials.size());
  return f;
}

Figures Best(const ExperimentConfig& cfg, int runs) {
  Figures best;
  for (int i = 0; i < runs; ++i) {
    Figures f = Drive(cfg, 1);
    if (i == 0 || f.seconds < best.seconds) best = f;
  }
  return best;
}

// Seconds to sample `trials` hyperparameter sets of `cfg` (the baseline). Best of three.
double SamplingSeconds(const ExperimentConfig& cfg, int64_t trials) {
  double best = 0;
  size_t sink = 0;  // keeps the samples observable so the loop is not optimised away
  for (int round = 0; round < 3; ++round) {
    s::NpRand rng(1);
    double start = CpuNow();
    for (int64_t i = 0; i < trials; ++i) {
      sink += s::SampleHyperparameters(cfg.hyperparameters, rng).size();
    }
    double seconds = CpuNow() - start;
    if (round == 0 || seconds < best) best = seconds;
  }
  if (sink == 0) std::fprintf(stderr, "sampling produced no hyperparameters\n");
  return best;
}

double UsPerEvent(const Figures& f) { return 1e6 * f.seconds / static_cast<double>(f.events); }

void Print(const std::string& name, const ExperimentConfig& cfg, const Figures& f) {
  double base = 1e6 * SamplingSeconds(cfg, f.trials) / static_cast<double>(f.events);
  std::printf(
      "%-30s trials=%-6lld events=%-7lld decisions=%-7lld %7.3f s %10.0f decisions/s "
      "%6.3f us/event | baseline %6.3f us/event (sampling the trials' hyperparameters alone) "
      "ratio %5.1fx\n",
      name.c_str(), static_cast<long long>(f.trials), static_cast<long long>(f.events),
      static_cast<long long>(f.decisions), f.seconds, static_cast<double>(f.decisions) / f.seconds,
      UsPerEvent(f), base, UsPerEvent(f) / base);
}

// Snapshot of a searcher after a whole search (FIFO order): what a full snapshot costs late in
// the search.
void FinalSnapshot(const std::string& name, const ExperimentConfig& cfg) {
  auto searcher = std::move(s::Searcher::Create(cfg)).value();
  std::deque<s::Action> queue;
  for (auto& a : searcher->InitialOperations()) queue.push_back(std::move(a));
  std::unordered_map<std::string, int64_t> ids;
  while (!queue.empty()) {
    s::Action a = std::move(queue.front());
    queue.pop_front();
    std::vector<s::Action> more;
    if (auto* c = std::get_if<s::CreateAction>(&a)) {
      ids.emplace(c->request_id, static_cast<int64_t>(ids.size()));
      more = searcher->TrialCreated(c->request_id);
    } else if (auto* v = std::get_if<s::ValidateAfterAction>(&a)) {
      double metric = static_cast<double>((ids[v->request_id] * 7919) % 1000);
      more = std::move(searcher->ValidationCompleted(v->request_id, metric, v->length)).value();
    } else if (auto* cl = std::get_if<s::CloseAction>(&a)) {
      more = searcher->TrialExited(cl->request_id);
    }
    for (auto& m : more) queue.push_back(std::move(m));
  }
  auto t0 = std::chrono::steady_clock::now();
  std::string text = searcher->Snapshot().dump();
  auto t1 = std::chrono::steady_clock::now();
  auto restored = s::Searcher::Restore(cfg, nlohmann::json::parse(text));
  auto t2 = std::chrono::steady_clock::now();
  std::printf("%-30s full snapshot=%zu bytes  dump %.2f ms  parse+restore %.2f ms  (%s)\n",
              name.c_str(), text.size(), std::chrono::duration<double, std::milli>(t1 - t0).count(),
              std::chrono::duration<double, std::milli>(t2 - t1).count(),
              restored.ok() ? "ok" : restored.status().ToString().c_str());
}

std::string Random(int trials) {
  return "{name: random, metric: loss, max_length: {batches: 1000}, max_trials: " +
         std::to_string(trials) + ", max_concurrent_trials: 64}";
}
std::string Grid() {
  return "{name: grid, metric: loss, max_length: {batches: 1000}, max_concurrent_trials: 64}";
}
std::string AsyncHalving(int trials) {
  return "{name: async_halving, metric: loss, num_rungs: 4, max_length: {batches: 100000}, "
         "max_trials: " +
         std::to_string(trials) + ", max_concurrent_trials: 64}";
}
std::string AdaptiveAsha(int trials) {
  return "{name: adaptive_asha, metric: loss, max_length: {batches: 100000}, max_trials: " +
         std::to_string(trials) + ", max_concurrent_trials: 64}";
}

}  // namespace

int main(int argc, char** argv) {
  // As the master runs the searchers: freed memory is kept for reuse (common/heap_retention.h).
  det::RetainFreedHeap();
  bool quick = false;
  std::string only;
  int runs = 9;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = std::atoi(argv[++i]);
  }
  if (quick) runs = 1;
  std::printf(
      "searcher_bench: in-process searches, 64 trials at a time finishing in random order, "
      "best of %d\n",
      runs);
  struct Search {
    const char* name;
    ExperimentConfig small, large;
  };
  std::vector<Search> searches = {
      {"random", Parse(Random(1000), kSampledSpace), Parse(Random(10000), kSampledSpace)},
      {"grid", Parse(Grid(), GridSpace(3)), Parse(Grid(), GridSpace(4))},
      {"asha (async_halving)", Parse(AsyncHalving(1000), kSampledSpace),
       Parse(AsyncHalving(10000), kSampledSpace)},
      {"adaptive_asha", Parse(AdaptiveAsha(1000), kSampledSpace),
       Parse(AdaptiveAsha(10000), kSampledSpace)},
  };
  std::vector<std::string> growth;
  for (const Search& search : searches) {
    if (std::string(search.name).rfind(only, 0) != 0) continue;
    Figures small = Best(search.small, runs);
    Print(std::string(search.name) + " 1,000 trials", search.small, small);
    if (quick) continue;
    Figures large = Best(search.large, runs);
    Print(std::string(search.name) + " 10,000 trials", search.large, large);
    char line[200];
    std::snprintf(line, sizeof(line),
                  "%-30s cost per event 1,000 -> 10,000 trials: %.3f -> %.3f us, growth %.2fx",
                  search.name, UsPerEvent(small), UsPerEvent(large),
                  UsPerEvent(large) / UsPerEvent(small));
    growth.push_back(line);
  }
  for (const std::string& line : growth) std::printf("%s\n", line.c_str());
  if (!quick && only.empty()) {
    FinalSnapshot("adaptive_asha 10,000 trials", Parse(AdaptiveAsha(10000), kSampledSpace));
    ExperimentConfig pbt = Parse(
        "{name: pbt, metric: loss, population_size: 256, num_rounds: 50, "
        "length_per_round: {batches: 100}, replace_function: {truncate_fraction: 0.25}, "
        "explore_function: {resample_probability: 0.2, perturb_factor: 0.2}}",
        kSampledSpace);
    Figures p = Best(pbt, 1);
    Print("pbt 256 x 50 rounds", pbt, p);
    FinalSnapshot("pbt 256 x 50 rounds", pbt);
  }
  std::printf("peak_rss=%ld KiB\n", PeakRssKib());
  return 0;
}
