#include "master/searcher/journaled_searcher.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>

#include "master/searcher/searcher_test_util.h"

namespace det::master::searcher {
namespace {

using nlohmann::json;
using testing::Config;

// Drives `s` FIFO to the end; trial i reports metric (i * 37) % 11, every 7th trial of rung 0
// exits early (invalid hyperparameters for every 14th), and every event also reports progress.
// At event `cut`, `*at_cut` gets the inner snapshot text and the journal is emptied.
void Drive(JournaledSearcher& s, int64_t cut, std::string* at_cut) {
  std::deque<Action> queue;
  std::map<std::string, int64_t> index;
  int64_t events = 0;
  auto absorb = [&](std::vector<Action> actions) {
    if (++events == cut) {
      *at_cut = s.Snapshot().dump();
      s.TakeEvents();
    }
    for (auto& a : actions) queue.push_back(std::move(a));
  };
  absorb(s.InitialOperations());
  while (!queue.empty()) {
    Action a = std::move(queue.front());
    queue.pop_front();
    if (auto* c = std::get_if<CreateAction>(&a)) {
      index.emplace(c->request_id, static_cast<int64_t>(index.size()));
      absorb(s.TrialCreated(c->request_id));
    } else if (auto* v = std::get_if<ValidateAfterAction>(&a)) {
      int64_t i = index[v->request_id];
      s.SetTrialProgress(v->request_id, static_cast<double>(v->length) / 2);
      if (i % 7 == 3) {
        absorb(s.TrialExitedEarly(v->request_id,
                                  i % 14 == 3 ? ExitedReason::kInvalidHp : ExitedReason::kErrored));
        absorb(s.TrialExited(v->request_id));
        continue;
      }
      auto actions =
          s.ValidationCompleted(v->request_id, static_cast<double>((i * 37) % 11), v->length);
      ASSERT_TRUE(actions.ok()) << actions.status().ToString();
      absorb(std::move(actions).value());
    } else if (auto* cl = std::get_if<CloseAction>(&a)) {
      absorb(s.TrialExited(cl->request_id));
    }
  }
}

// Restoring the snapshot taken at any event and replaying the journal recorded after it gives
// the searcher the uninterrupted one became (same snapshot text: RNG, rungs, trials).
TEST(JournaledSearcher, ReplayOverAnEarlierSnapshotRebuildsTheSameSearcher) {
  for (const char* yaml :
       {"{name: adaptive_asha, metric: loss, max_length: {batches: 800}, max_trials: 30, "
        "max_concurrent_trials: 4}",
        "{name: adaptive_asha, metric: loss, max_length: {batches: 800}, max_trials: 30, "
        "stop_once: true, smaller_is_better: false}",
        "{name: random, metric: loss, max_length: {batches: 100}, max_trials: 12, "
        "max_concurrent_trials: 3}",
        "{name: grid, metric: loss, max_length: {batches: 100}}",
        "{name: pbt, metric: loss, population_size: 6, num_rounds: 4, "
        "length_per_round: {batches: 100}, replace_function: {truncate_fraction: 0.34}, "
        "explore_function: {resample_probability: 0.2, perturb_factor: 0.2}}"}) {
    config::ExperimentConfig cfg = Config(yaml, 3);
    int checked = 0;
    for (int64_t cut : {1, 5, 17, 40}) {
      JournaledSearcher live(std::move(Searcher::Create(cfg)).value());
      std::string at_cut;
      Drive(live, cut, &at_cut);
      if (at_cut.empty()) continue;  // the search ended before this event
      ++checked;
      std::vector<json> journal = live.TakeEvents();
      auto restored = Searcher::Restore(cfg, json::parse(at_cut));
      ASSERT_TRUE(restored.ok()) << restored.status().ToString();
      ASSERT_TRUE(JournaledSearcher::Replay(**restored, journal).ok());
      EXPECT_EQ((*restored)->Snapshot().dump(), live.Snapshot().dump())
          << yaml << " cut at event " << cut << " (" << journal.size() << " events replayed)";
    }
    EXPECT_GE(checked, 3) << yaml << " is too short to cut at three events";
  }
}

TEST(JournaledSearcher, MalformedEventsAreRefusedByName) {
  config::ExperimentConfig cfg =
      Config("{name: random, metric: loss, max_length: {batches: 100}, max_trials: 2}");
  auto s = std::move(Searcher::Create(cfg)).value();
  Status unknown = JournaledSearcher::Replay(*s, {json::array({"z", "id"})});
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("unknown event 'z'"), std::string::npos) << unknown.ToString();
  Status short_event = JournaledSearcher::Replay(*s, {json::array({"v", "id"})});
  EXPECT_EQ(short_event.code(), StatusCode::kInvalidArgument);
  Status reason = JournaledSearcher::Replay(*s, {json::array({"e", "id", 99})});
  EXPECT_NE(reason.message().find("unknown exit reason 99"), std::string::npos)
      << reason.ToString();
}

}  // namespace
}  // namespace det::master::searcher
