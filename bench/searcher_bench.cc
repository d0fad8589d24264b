// searcher_bench: the pure searcher driven in-process (no cluster, no store) by Simulate.
// Prints decisions per second, the cost per event at 1,000 and at 10,000 trials (so growth with
// the number of trials is visible), the size and cost of one snapshot at the end (the master
// persists one after every event), and the peak RSS (getrusage ru_maxrss).
//
// Baseline, measured in the same run: sampling the same number of hyperparameter sets from the
// same space (SampleHyperparameters, what every search does per trial), spread over the same
// events; each search prints its cost per event next to the baseline's and the ratio, i.e. what
// the searcher's own bookkeeping costs on top of drawing its trials.
//
// Usage: searcher_bench [--quick]   (--quick: 1,000-trial ASHA and a 64 x 10 PBT only)

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "master/config/experiment_config.h"
#include "master/searcher/hparam_sampling.h"
#include "master/searcher/nprand.h"
#include "master/searcher/searcher.h"
#include "master/searcher/simulate.h"

namespace {

using det::master::config::ConfigDefaults;
using det::master::config::ExperimentConfig;
using det::master::config::ParseExperimentConfig;
using det::master::searcher::Searcher;
using det::master::searcher::Simulate;
using det::master::searcher::SimulatedMetric;
using det::master::searcher::SimulateOptions;

long PeakRssKib() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;  // KiB on Linux
}

ExperimentConfig Parse(const std::string& searcher) {
  std::string yaml =
      "entrypoint: model_def:Trial\nhyperparameters:\n"
      "  lr: {type: log, minval: -5, maxval: -1, base: 10}\n"
      "  layers: {type: int, minval: 1, maxval: 8}\n"
      "  dropout: {type: double, minval: 0.0, maxval: 0.5}\n"
      "  opt: {type: categorical, vals: [sgd, adam, adamw]}\n"
      "searcher: " +
      searcher + "\n";
  auto cfg = ParseExperimentConfig(yaml, ConfigDefaults{});
  if (!cfg.ok()) {
    std::fprintf(stderr, "bad config: %s\n", cfg.status().ToString().c_str());
    std::exit(2);
  }
  return *cfg;
}

struct Figures {
  double seconds = 0;
  int64_t trials = 0, events = 0, decisions = 0;
};

Figures Measure(const ExperimentConfig& cfg, uint32_t order_seed) {
  SimulateOptions options;
  options.metric = SimulatedMetric::kSpread;
  options.order_seed = order_seed;  // random completion order, as on a cluster
  options.record_progress = true;   // the master asks for progress after every event
  auto start = std::chrono::steady_clock::now();
  auto result = Simulate(cfg, options);
  auto end = std::chrono::steady_clock::now();
  if (!result.ok()) {
    std::fprintf(stderr, "simulate failed: %s\n", result.status().ToString().c_str());
    std::exit(1);
  }
  Figures f;
  f.seconds = std::chrono::duration<double>(end - start).count();
  f.trials = static_cast<int64_t>(result->trials.size());
  f.events = result->events;
  f.decisions = result->decisions;

  return f;
}

void Print(const char* name, const Figures& f) {
  std::printf(
      "%-34s trials=%-7lld events=%-8lld decisions=%-8lld %8.3f s  "
      "%10.0f decisions/s  %7.2f us/event  peak_rss=%ld KiB\n",
      name, static_cast<long long>(f.trials), static_cast<long long>(f.events),
      static_cast<long long>(f.decisions), f.seconds, static_cast<double>(f.decisions) / f.seconds,
      1e6 * f.seconds / static_cast<double>(f.events), PeakRssKib());
}

// Snapshot of a searcher after a whole search: what the master writes after each event late
// in the search.
void FinalSnapshot(const char* name, const ExperimentConfig& cfg) {
  // Drives the search FIFO here (Simulate does not hand its searcher back).
  auto s = std::move(Searcher::Create(cfg)).value();
  std::vector<det::master::searcher::Action> queue = s->InitialOperations();
  size_t head = 0;
  int64_t index = 0;
  std::map<std::string, int64_t> ids;
  while (head < queue.size()) {
    det::master::searcher::Action a = queue[head++];
    std::vector<det::master::searcher::Action> more;
    if (auto* c = std::get_if<det::master::searcher::CreateAction>(&a)) {
      ids[c->request_id] = index++;
      more = s->TrialCreated(c->request_id);
    } else if (auto* v = std::get_if<det::master::searcher::ValidateAfterAction>(&a)) {
      double metric = static_cast<double>((ids[v->request_id] * 7919) % 1000);
      more = std::move(s->ValidationCompleted(v->request_id, metric, v->length)).value();
    } else if (auto* cl = std::get_if<det::master::searcher::CloseAction>(&a)) {
      more = s->TrialExited(cl->request_id);
    }
    for (auto& m : more) queue.push_back(std::move(m));
  }
  auto t0 = std::chrono::steady_clock::now();
  std::string text = s->Snapshot().dump();
  auto t1 = std::chrono::steady_clock::now();
  auto restored = Searcher::Restore(cfg, nlohmann::json::parse(text));
  auto t2 = std::chrono::steady_clock::now();
  std::printf("%-34s snapshot=%zu bytes  dump %.2f ms  parse+restore %.2f ms  (%s)\n", name,
              text.size(), std::chrono::duration<double, std::milli>(t1 - t0).count(),
              std::chrono::duration<double, std::milli>(t2 - t1).count(),
              restored.ok() ? "ok" : restored.status().ToString().c_str());
}

// Seconds to sample `trials` hyperparameter sets of `cfg` (the baseline: what the search costs
// beyond drawing its trials' hyperparameters). Best of three, to damp noise.
double SamplingSeconds(const ExperimentConfig& cfg, int64_t trials) {
  double best = 0;
  size_t sink = 0;  // keeps the samples observable so the loop is not optimised away
  for (int round = 0; round < 3; ++round) {
    det::master::searcher::NpRand rng(1);
    auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < trials; ++i) {
      sink += det::master::searcher::SampleHyperparameters(cfg.hyperparameters, rng).size();
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (round == 0 || seconds < best) best = seconds;
  }
  if (sink == 0) std::fprintf(stderr, "sampling produced no hyperparameters\n");
  return best;
}

void PrintAgainstBaseline(const char* name, const ExperimentConfig& cfg, const Figures& f) {
  double base = SamplingSeconds(cfg, f.trials);
  double events = static_cast<double>(f.events);
  std::printf(
      "%-34s %.2f us/event vs baseline %.2f us/event (sampling the %lld trials' "
      "hyperparameters alone, same run): ratio %.1fx\n",
      name, 1e6 * f.seconds / events, 1e6 * base / events, static_cast<long long>(f.trials),
      f.seconds / base);
}

std::string Asha(int trials) {
  return "{name: adaptive_asha, metric: loss, max_length: {batches: 100000}, max_trials: " +
         std::to_string(trials) + ", max_concurrent_trials: 64}";
}

std::string Pbt(int population, int rounds) {
  return "{name: pbt, metric: loss, population_size: " + std::to_string(population) +
         ", num_rounds: " + std::to_string(rounds) +
         ", length_per_round: {batches: 100}, replace_function: {truncate_fraction: 0.25}, "
         "explore_function: {resample_probability: 0.2, perturb_factor: 0.2}}";
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  std::printf("searcher_bench: in-process searches, metric = spread, random completion order\n");
  ExperimentConfig asha1k = Parse(Asha(1000));
  Figures a1k = Measure(asha1k, 1);
  Print("adaptive_asha 1,000 trials", a1k);
  PrintAgainstBaseline("adaptive_asha 1,000 trials", asha1k, a1k);
  if (!quick) {
    ExperimentConfig asha10k = Parse(Asha(10000));
    Figures a10k = Measure(asha10k, 1);
    Print("adaptive_asha 10,000 trials", a10k);
    PrintAgainstBaseline("adaptive_asha 10,000 trials", asha10k, a10k);
    double per1k = a1k.seconds / static_cast<double>(a1k.events);
    double per10k = a10k.seconds / static_cast<double>(a10k.events);
    std::printf("cost per event growth 1,000 -> 10,000 trials: %.2fx (%.2f -> %.2f us)\n",
                per10k / per1k, 1e6 * per1k, 1e6 * per10k);
    FinalSnapshot("adaptive_asha 10,000 trials", Parse(Asha(10000)));
  }
  ExperimentConfig pbt = quick ? Parse(Pbt(64, 10)) : Parse(Pbt(256, 50));
  Figures p = Measure(pbt, 1);
  Print(quick ? "pbt 64 x 10 rounds" : "pbt 256 x 50 rounds", p);
  PrintAgainstBaseline(quick ? "pbt 64 x 10 rounds" : "pbt 256 x 50 rounds", pbt, p);
  if (!quick) FinalSnapshot("pbt 256 x 50 rounds", Parse(Pbt(256, 50)));
  std::printf("peak_rss=%ld KiB\n", PeakRssKib());
  return 0;
}
