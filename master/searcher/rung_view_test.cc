// BuildRungViews over real searchers driven event by event: what it shows is what the searcher
// decided (promotions, stops, completions per bracket).
#include "master/searcher/rung_view.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <set>

#include "master/searcher/searcher.h"
#include "master/searcher/searcher_test_util.h"

namespace det::master::searcher {
namespace {

using testing::Config;

// Runs a search to its end (or `max_validations`), FIFO, trial i (creation order) reporting
// metric_of(i) at every validation. Returns the searcher and the request ids in creation order.
struct Driven {
  std::unique_ptr<Searcher> searcher;
  std::vector<std::string> ids;
};

Driven Drive(const config::ExperimentConfig& cfg, std::function<double(size_t)> metric_of,
             int max_validations = 1'000'000, std::set<size_t> errors = {}) {
  Driven d;
  auto s = Searcher::Create(cfg);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  d.searcher = std::move(s).value();
  std::map<std::string, size_t> index;
  std::deque<Action> queue;
  auto push = [&](std::vector<Action> actions) {
    for (Action& a : actions) queue.push_back(std::move(a));
  };
  push(d.searcher->InitialOperations());
  int validations = 0;
  while (!queue.empty()) {
    Action a = std::move(queue.front());
    queue.pop_front();
    if (auto* c = std::get_if<CreateAction>(&a)) {
      index[c->request_id] = d.ids.size();
      d.ids.push_back(c->request_id);
      push(d.searcher->TrialCreated(c->request_id));
    } else if (auto* v = std::get_if<ValidateAfterAction>(&a)) {
      if (validations++ >= max_validations) continue;  // left training
      if (errors.contains(index[v->request_id])) {     // the trial's process fails instead
        push(d.searcher->TrialExitedEarly(v->request_id, ExitedReason::kErrored));
        push(d.searcher->TrialExited(v->request_id));
        continue;
      }
      auto next = d.searcher->ValidationCompleted(v->request_id, metric_of(index[v->request_id]),
                                                  v->length);
      EXPECT_TRUE(next.ok()) << next.status().ToString();
      push(std::move(next).value());
    } else if (auto* c = std::get_if<CloseAction>(&a)) {
      push(d.searcher->TrialExited(c->request_id));
    }
  }
  return d;
}

std::vector<BracketView> Views(const config::ExperimentConfig& cfg, const Searcher& s) {
  auto params = ReadMethodParams(cfg);
  EXPECT_TRUE(params.ok());
  auto views = BuildRungViews(*params, s.Snapshot());
  EXPECT_TRUE(views.ok()) << views.status().ToString();
  return views.ok() ? *views : std::vector<BracketView>{};
}

const char kAsha[] =
    "{name: adaptive_asha, metric: loss, max_length: {batches: 16}, divisor: 2, max_rungs: 3, "
    "max_trials: 6, max_concurrent_trials: 6, mode: standard}";

TEST(RungViewTest, AdaptiveAshaBracketsShowEachPromotionAndStop) {
  auto cfg = Config(kAsha);
  Driven d = Drive(cfg, [](size_t i) { return 1.0 + static_cast<double>(i); });
  std::vector<BracketView> views = Views(cfg, *d.searcher);
  // Standard mode over 3 rungs: brackets of 3 and 2 rungs, lengths suffixes of 4, 8, 16.
  ASSERT_EQ(views.size(), 2u);
  ASSERT_EQ(views[0].rungs.size(), 3u);
  ASSERT_EQ(views[1].rungs.size(), 2u);
  EXPECT_EQ(views[0].rungs[0].length, 4u);
  EXPECT_EQ(views[0].rungs[2].length, 16u);
  EXPECT_EQ(views[1].rungs[0].length, 8u);
  EXPECT_EQ(views[0].max_trials + views[1].max_trials, 6);

  std::set<std::string> seen;
  for (const BracketView& b : views) {
    // Every trial of the bracket is in its first rung once, and the finished search left
    // nobody running or waiting.
    for (const RungTrialView& t : b.rungs[0].trials) EXPECT_TRUE(seen.insert(t.request_id).second);
    EXPECT_EQ(static_cast<int64_t>(b.rungs[0].trials.size()), b.max_trials);
    for (size_t r = 0; r < b.rungs.size(); ++r) {
      std::set<std::string> next;
      if (r + 1 < b.rungs.size()) {
        for (const auto& t : b.rungs[r + 1].trials) next.insert(t.request_id);
      }
      for (const RungTrialView& t : b.rungs[r].trials) {
        ASSERT_TRUE(t.metric.has_value());
        if (r + 1 == b.rungs.size()) {
          EXPECT_EQ(t.outcome, "completed");
        } else {
          EXPECT_TRUE(t.outcome == "promoted" || t.outcome == "stopped") << t.outcome;
          // Promoted exactly when it is in the next rung.
          EXPECT_EQ(t.outcome == "promoted", next.contains(t.request_id)) << t.request_id;
        }
      }
      // Best first.
      for (size_t i = 1; i < b.rungs[r].trials.size(); ++i) {
        EXPECT_LE(*b.rungs[r].trials[i - 1].metric, *b.rungs[r].trials[i].metric);
      }
    }
    // The best trial of the first rung goes on; the worst of a rung of several does not.
    EXPECT_EQ(b.rungs[0].trials.front().outcome, "promoted");
    EXPECT_EQ(b.rungs[0].trials.back().outcome, "stopped");
  }
  EXPECT_EQ(seen, std::set<std::string>(d.ids.begin(), d.ids.end()));
  // The metric shown is the one the trial reported (trial i reports 1 + i).
  for (const BracketView& b : views) {
    for (const RungTrialView& t : b.rungs[0].trials) {
      size_t i = std::find(d.ids.begin(), d.ids.end(), t.request_id) - d.ids.begin();
      EXPECT_DOUBLE_EQ(*t.metric, 1.0 + static_cast<double>(i));
    }
  }
  nlohmann::json j = RungViewsToJson(views);
  EXPECT_EQ(j[0]["rungs"][0]["length"], 4);
  EXPECT_EQ(j[0]["rungs"][0]["trials"][0]["outcome"], "promoted");
}

TEST(RungViewTest, MidSearchTrialsAreRunningOrWaiting) {
  auto cfg = Config(kAsha);
  Driven d = Drive(
      cfg, [](size_t i) { return 10.0 - static_cast<double>(i); }, 1);
  std::vector<BracketView> views = Views(cfg, *d.searcher);
  ASSERT_EQ(views.size(), 2u);
  int running = 0, reported = 0;
  for (const BracketView& b : views) {
    for (const RungLevelView& r : b.rungs) {
      for (const RungTrialView& t : r.trials) {
        if (t.outcome == "running") {
          ++running;
          EXPECT_FALSE(t.metric.has_value());
        } else {
          ++reported;
          EXPECT_TRUE(t.metric.has_value());
          EXPECT_TRUE(t.outcome == "waiting" || t.outcome == "promoted") << t.outcome;
        }
      }
    }
  }
  EXPECT_EQ(reported, 1);  // one validation so far
  // Every other created trial is still training towards its first rung (the one that
  // reported may also be running towards the next one if it was promoted).
  EXPECT_GE(running, static_cast<int>(d.ids.size()) - 1);
  EXPECT_LE(running, static_cast<int>(d.ids.size()));
}

TEST(RungViewTest, LargerIsBetterShowsTheReportedValues) {
  auto cfg = Config(
      "{name: async_halving, metric: acc, smaller_is_better: false, num_rungs: 2, "
      "max_length: {batches: 8}, divisor: 2, max_trials: 4, max_concurrent_trials: 4}");
  Driven d = Drive(cfg, [](size_t i) { return 0.5 + 0.1 * static_cast<double>(i); });
  std::vector<BracketView> views = Views(cfg, *d.searcher);
  ASSERT_EQ(views.size(), 1u);
  ASSERT_EQ(views[0].rungs.size(), 2u);
  EXPECT_EQ(views[0].rungs[0].length, 4u);
  const auto& first = views[0].rungs[0].trials;
  ASSERT_EQ(first.size(), 4u);
  EXPECT_GT(*first.front().metric, *first.back().metric);  // best (largest) first
  EXPECT_GE(*first.front().metric, 0.5);
  EXPECT_EQ(first.front().outcome, "promoted");
}

TEST(RungViewTest, StopBasedAshaShowsStops) {
  auto cfg = Config(
      "{name: async_halving, metric: loss, stop_once: true, num_rungs: 3, "
      "max_length: {batches: 16}, divisor: 2, max_trials: 4, max_concurrent_trials: 4}");
  Driven d = Drive(cfg, [](size_t i) { return 1.0 + static_cast<double>(i); });
  std::vector<BracketView> views = Views(cfg, *d.searcher);
  ASSERT_EQ(views.size(), 1u);
  const auto& rungs = views[0].rungs;
  ASSERT_EQ(rungs.size(), 3u);
  EXPECT_EQ(rungs[0].trials.size(), 4u);
  int stopped = 0;
  for (const auto& t : rungs[0].trials) stopped += t.outcome == "stopped";
  EXPECT_GT(stopped, 0);
  ASSERT_FALSE(rungs[2].trials.empty());
  for (const auto& t : rungs[2].trials) EXPECT_EQ(t.outcome, "completed");
}

TEST(RungViewTest, AnErroredTrialShowsAsExitedWithoutAMetric) {
  auto cfg = Config(
      "{name: async_halving, metric: loss, num_rungs: 2, max_length: {batches: 8}, divisor: 2, "
      "max_trials: 4, max_concurrent_trials: 4}");
  Driven d = Drive(cfg, [](size_t i) { return 1.0 + static_cast<double>(i); }, 1'000'000, {1});
  std::vector<BracketView> views = Views(cfg, *d.searcher);
  ASSERT_EQ(views.size(), 1u);
  const auto& first = views[0].rungs[0].trials;
  auto it = std::find_if(first.begin(), first.end(),
                         [&](const RungTrialView& t) { return t.request_id == d.ids[1]; });
  ASSERT_NE(it, first.end());
  EXPECT_EQ(it->outcome, "exited");
  EXPECT_FALSE(it->metric.has_value());
  EXPECT_EQ(first.back().request_id, d.ids[1]);  // no metric: listed last
}

TEST(RungViewTest, OtherSearchersHaveNoRungs) {
  auto cfg = Config("{name: random, metric: loss, max_length: {batches: 8}, max_trials: 2}");
  auto params = ReadMethodParams(cfg);
  ASSERT_TRUE(params.ok());
  auto views = BuildRungViews(*params, nlohmann::json::object());
  ASSERT_FALSE(views.ok());
  EXPECT_NE(views.status().message().find("random"), std::string::npos);
}

}  // namespace
}  // namespace det::master::searcher
