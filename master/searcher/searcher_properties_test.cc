// Generic checks over every method: snapshot/restore after every event changes nothing, and
// random configs keep the invariants (lengths, trial counts, one Shutdown, progress in [0,1]
// ending at 1).
#include <memory>
#include <random>

#include <gtest/gtest.h>

#include "master/searcher/bracket_math.h"
#include "master/searcher/searcher_test_util.h"
#include "master/searcher/sync_halving.h"

namespace det::master::searcher {
namespace {

using testing::Config;

// The last action of a transcript (events such as a trailing trial_exited are skipped).
std::string LastAction(const std::vector<std::string>& transcript) {
  for (auto it = transcript.rbegin(); it != transcript.rend(); ++it) {
    if (it->rfind("event ", 0) != 0) return *it;
  }
  return "";
}

struct Case {
  std::string searcher;
  uint64_t max_length = 0;   // 0: not checked (time mode)
  int64_t max_trials = 0;    // bound on valid trials
};

std::vector<Case> Fixed() {
  return {
      {"{name: single, metric: loss, max_length: {batches: 50}}", 50, 1},
      {"{name: random, metric: loss, max_trials: 5, max_concurrent_trials: 2, "
       "max_length: {batches: 50}}", 50, 5},
      {"{name: grid, metric: loss, max_length: {batches: 30}, max_concurrent_trials: 2}", 30, 6},
      {"{name: async_halving, metric: loss, num_rungs: 3, max_length: {batches: 900}, "
       "divisor: 3, max_trials: 12, max_concurrent_trials: 4}", 900, 12},
      {"{name: async_halving, metric: loss, num_rungs: 3, max_length: {batches: 900}, "
       "divisor: 3, max_trials: 12, max_concurrent_trials: 4, stop_once: true}", 900, 12},
      {"{name: adaptive_asha, metric: loss, max_length: {batches: 1000}, max_trials: 20, "
       "mode: conservative}", 1000, 20},
      {"{name: adaptive_asha, metric: loss, max_time: 1000, time_metric: batches, "
       "max_trials: 20, max_concurrent_trials: 3}", 0, 20},
      {"{name: adaptive, metric: loss, max_length: {batches: 3200}, "
       "budget: {batches: 12800}, max_rungs: 3}", 3200, 1000},
      {"{name: adaptive_simple, metric: loss, max_length: {batches: 3200}, max_trials: 9}",
       3200, 9},
      {"{name: pbt, metric: loss, population_size: 4, num_rounds: 3, "
       "length_per_round: {batches: 10}, replace_function: {truncate_fraction: 0.5}, "
       "explore_function: {resample_probability: 0.3, perturb_factor: 0.2}}", 30, 8},
  };
}

// Options of a simulation with metrics that vary and two trials that exit early.
SimulateOptions WithEarlyExits(uint32_t order, std::vector<std::string>* transcript) {
  SimulateOptions o;
  o.order_seed = order;
  o.transcript = transcript;
  o.metric_fn = [](int64_t i, int64_t k) { return static_cast<double>((i * 7 + k) % 5); };
  o.exit_fn = [](int64_t i, uint64_t) -> std::optional<ExitedReason> {
    if (i == 2) return ExitedReason::kErrored;
    if (i == 4) return ExitedReason::kInvalidHp;
    return std::nullopt;
  };
  return o;
}

// Snapshot + restore after EVERY event gives byte-identical snapshots (checked inside
// Simulate) and the identical action stream, for every method, with early exits mixed in.
TEST(SearcherPropertiesTest, SnapshotRestoreAfterEveryEventChangesNothing) {
  for (const Case& c : Fixed()) {
    for (uint32_t order : {0u, 5u}) {
      auto cfg = Config(c.searcher, 11);
      auto make = [&](bool round_trip, std::vector<std::string>* transcript) {
        SimulateOptions o = WithEarlyExits(order, transcript);
        o.round_trip = round_trip;
        return Simulate(cfg, o);
      };
      std::vector<std::string> plain, restored;
      auto a = make(false, &plain);
      auto b = make(true, &restored);
      ASSERT_TRUE(a.ok()) << c.searcher << ": " << a.status().ToString();
      ASSERT_TRUE(b.ok()) << c.searcher << ": " << b.status().ToString();
      EXPECT_EQ(plain, restored) << c.searcher;
      EXPECT_EQ(a->shutdowns, 1) << c.searcher;
      EXPECT_EQ(LastAction(plain).rfind("shutdown", 0), 0u) << c.searcher;
    }
  }
}

// A clone after every event is the same searcher (equal snapshots, the identical action stream
// when the search goes on with the copy) and independent of it (the original does not change
// when the copy does): the searcher journal's writer snapshots such a copy on its own thread.
TEST(SearcherPropertiesTest, CloneAfterEveryEventIsAnIndependentEqualCopy) {
  for (const Case& c : Fixed()) {
    auto cfg = Config(c.searcher, 7);
    auto make = [&](bool clone, std::vector<std::string>* transcript) {
      SimulateOptions o = WithEarlyExits(5, transcript);
      o.clone = clone;
      return Simulate(cfg, o);
    };
    std::vector<std::string> plain, cloned;
    auto a = make(false, &plain);
    auto b = make(true, &cloned);
    ASSERT_TRUE(a.ok()) << c.searcher << ": " << a.status().ToString();
    ASSERT_TRUE(b.ok()) << c.searcher << ": " << b.status().ToString();
    EXPECT_EQ(plain, cloned) << c.searcher;
  }
}

// Without invalid trials, progress starts low, never decreases and ends at exactly 1
// (the pre-0.38 Simulate check), in FIFO and random order.
TEST(SearcherPropertiesTest, ProgressNeverDecreases) {
  for (const Case& c : Fixed()) {
    for (uint32_t order : {0u, 3u}) {
      SimulateOptions o;
      o.order_seed = order;
      o.metric_fn = [](int64_t i, int64_t k) { return static_cast<double>((i * 7 + k) % 5); };
      auto r = Simulate(Config(c.searcher, 3), o);
      ASSERT_TRUE(r.ok()) << c.searcher;
      ASSERT_FALSE(r->progress.empty());
      EXPECT_LT(r->progress.front(), 0.5) << c.searcher;
      for (size_t i = 1; i < r->progress.size(); ++i) {
        ASSERT_GE(r->progress[i], r->progress[i - 1]) << c.searcher << " event " << i;
      }
      EXPECT_EQ(r->progress.back(), 1.0) << c.searcher;
    }
  }
}

// A snapshot of the wrong method or version is rejected.
TEST(SearcherPropertiesTest, RestoreRejectsForeignSnapshots) {
  auto asha = Config(Fixed()[3].searcher);
  auto pbt = Config(Fixed()[9].searcher);
  auto s = std::move(Searcher::Create(asha)).value();
  (void)s->InitialOperations();
  EXPECT_FALSE(Searcher::Restore(pbt, s->Snapshot()).ok());
  auto snap = s->Snapshot();
  snap["version"] = 99;
  EXPECT_FALSE(Searcher::Restore(asha, snap).ok());
  snap = s->Snapshot();
  snap["method"] = "garbage";
  EXPECT_FALSE(Searcher::Restore(asha, snap).ok());
}

struct Generated {
  std::string yaml;
  std::string hparams;
  uint64_t max_length = 0;  // checked bound per trial; 0 = unchecked
  int64_t max_valid = 0;    // bound on trials that were not invalid
};

Generated RandomConfig(std::mt19937& g) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g); };
  const char* modes[] = {"aggressive", "standard", "conservative"};
  const double divisors[] = {2, 3, 4, 2.5};
  Generated out;
  out.hparams = "  x: {type: int, minval: 0, maxval: " + std::to_string(pick(1, 20)) +
                ", count: " + std::to_string(pick(1, 4)) + "}\n" +
                "  y: {type: double, minval: 0, maxval: 1, count: " + std::to_string(pick(1, 3)) +
                "}\n  z: {type: categorical, vals: [a, b]}\n";
  int kind = pick(0, 6);
  int64_t trials = pick(1, 30);
  uint64_t len = static_cast<uint64_t>(pick(1, 3000));
  int mct = pick(0, 6);
  double d = divisors[pick(0, 3)];
  std::string sib = ", metric: loss, smaller_is_better: " +
                    std::string(pick(0, 1) ? "true" : "false");
  // max_concurrent_trials only exists for random, grid and the ASHA searchers.
  std::string common = sib + ", max_concurrent_trials: " + std::to_string(mct);
  std::string length = ", max_length: {batches: " + std::to_string(len) + "}";
  std::string divisor = ", divisor: " + nlohmann::json(d).dump();
  switch (kind) {
    case 0:
      out.yaml = "{name: random, max_trials: " + std::to_string(trials) + common + length + "}";
      out.max_length = len;
      out.max_valid = trials;
      break;
    case 1: {
      out.yaml = "{name: grid" + common + length + "}";
      out.max_length = len;
      out.max_valid = 4 * 3 * 2;
      break;
    }
    case 2: {
      bool time = pick(0, 3) == 0;
      out.yaml = "{name: async_halving, num_rungs: " + std::to_string(pick(1, 4)) +
                 ", max_trials: " + std::to_string(trials) + common + divisor +
                 (time ? ", max_time: " + std::to_string(len) + ", time_metric: batches"
                       : length) +
                 ", stop_once: " + (pick(0, 1) ? "true" : "false") + "}";
      out.max_length = time ? 0 : len;
      out.max_valid = trials;
      break;
    }
    case 3: {
      bool time = pick(0, 3) == 0;
      out.yaml = "{name: adaptive_asha, max_trials: " + std::to_string(trials) + common +
                 divisor + ", max_rungs: " + std::to_string(pick(1, 5)) + ", mode: " +
                 modes[pick(0, 2)] +
                 (time ? ", max_time: " + std::to_string(len) + ", time_metric: batches"
                       : length) +
                 ", stop_once: " + (pick(0, 1) ? "true" : "false") + "}";
      out.max_length = time ? 0 : len;
      out.max_valid = trials;
      break;
    }
    case 4: {
      int rungs = pick(1, 4);
      uint64_t budget = len * static_cast<uint64_t>(pick(1, 12));
      std::string mode = modes[pick(0, 2)];
      out.yaml = "{name: adaptive, budget: {batches: " + std::to_string(budget) + "}" + sib +
                 divisor + length + ", max_rungs: " + std::to_string(rungs) + ", mode: " + mode +
                 "}";
      out.max_length = len;
      auto counts = *ModeRungCounts(mode, rungs);
      for (int r : counts) {
        out.max_valid += SyncHalvingRungsForBudget(r, len, budget / counts.size(), d)[0].start;
      }
      break;
    }
    case 5: {
      int rungs = pick(1, 4);
      out.yaml = "{name: adaptive_simple, max_trials: " + std::to_string(trials) + sib +
                 divisor + length + ", max_rungs: " + std::to_string(rungs) + ", mode: " +
                 modes[pick(0, 2)] + "}";
      out.max_length = len;
      out.max_valid = trials + rungs;  // every bracket runs at least one trial
      break;
    }
    default: {
      int pop = pick(1, 6), rounds = pick(1, 5), lpr = pick(1, 100);
      double trunc = pick(0, 2) * 0.25;
      out.yaml = "{name: pbt, population_size: " + std::to_string(pop) +
                 ", num_rounds: " + std::to_string(rounds) + ", length_per_round: {batches: " +
                 std::to_string(lpr) + "}, replace_function: {truncate_fraction: " +
                 nlohmann::json(trunc).dump() +
                 "}, explore_function: {resample_probability: 0.2, perturb_factor: 0.3}" +
                 sib + "}";
      out.max_length = static_cast<uint64_t>(lpr) * static_cast<uint64_t>(rounds);
      out.max_valid = pop + (rounds - 1) * static_cast<int64_t>(trunc * pop);
      break;
    }
  }
  return out;
}

// Random configs, random metrics, random trial order and random early exits: no trial is asked
// past its maximum length, never more trials than allowed, exactly one Shutdown (the last
// action), progress within [0, 1] ending at 1.
TEST(SearcherPropertiesTest, RandomConfigsKeepInvariants) {
  std::mt19937 g(20240611);
  for (int iter = 0; iter < 300; ++iter) {
    Generated gen = RandomConfig(g);
    auto cfg = Config(gen.yaml, static_cast<uint32_t>(iter), gen.hparams);
    auto rng = std::make_shared<std::mt19937>(static_cast<uint32_t>(iter));
    auto invalid = std::make_shared<int64_t>(0);
    SimulateOptions o;
    o.order_seed = static_cast<uint32_t>(iter % 3);
    o.round_trip = iter % 10 == 0;
    o.metric_fn = [rng](int64_t, int64_t) {
      return std::uniform_real_distribution<double>(0, 1)(*rng);
    };
    o.exit_fn = [rng, invalid](int64_t, uint64_t) -> std::optional<ExitedReason> {
      int roll = std::uniform_int_distribution<int>(0, 39)(*rng);
      if (roll == 0) return ExitedReason::kErrored;
      if (roll == 1) {
        ++*invalid;
        return ExitedReason::kInvalidHp;
      }
      if (roll == 2) return ExitedReason::kUserRequestedStop;
      return std::nullopt;
    };
    std::vector<std::string> transcript;
    o.transcript = &transcript;
    auto r = Simulate(cfg, o);
    ASSERT_TRUE(r.ok()) << gen.yaml << ": " << r.status().ToString();
    EXPECT_EQ(r->shutdowns, 1) << gen.yaml;
    EXPECT_EQ(LastAction(transcript).rfind("shutdown", 0), 0u) << gen.yaml;
    if (gen.max_length > 0) {
      for (const auto& t : r->trials) {
        for (uint64_t l : t.lengths) ASSERT_LE(l, gen.max_length) << gen.yaml;
      }
    }
    int64_t valid = static_cast<int64_t>(r->trials.size()) - *invalid;
    EXPECT_LE(valid, gen.max_valid) << gen.yaml;
    ASSERT_FALSE(r->progress.empty());
    for (double p : r->progress) {
      ASSERT_GE(p, 0.0) << gen.yaml;
      ASSERT_LE(p, 1.0) << gen.yaml;
    }
    EXPECT_EQ(r->progress.back(), 1.0) << gen.yaml;
  }
}

}  // namespace
}  // namespace det::master::searcher
