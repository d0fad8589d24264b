#include "master/searcher/random_search.h"

#include <deque>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "master/config/experiment_config.h"
#include "master/searcher/create_action.h"
#include "master/searcher/searcher.h"

namespace det::master::searcher {
namespace {

using nlohmann::json;

config::ExperimentConfig Config(const std::string& searcher_yaml, uint32_t seed = 0) {
  std::string yaml = "entrypoint: model_def:Trial\n"
                     "records_per_epoch: 1000\n"  // lets max_length use epochs
                     "hyperparameters:\n"
                     "  x: {type: int, minval: 0, maxval: 10}\n"
                     "  lr: {type: log, minval: -4, maxval: -1}\n"
                     "  bs: 32\n"
                     "searcher: " + searcher_yaml + "\n";
  config::ConfigDefaults defaults;
  defaults.experiment_seed = seed;
  auto cfg = config::ParseExperimentConfig(yaml, defaults);
  EXPECT_TRUE(cfg.ok()) << cfg.status().ToString();
  return cfg.ok() ? *cfg : config::ExperimentConfig{};
}

std::unique_ptr<Searcher> Make(const config::ExperimentConfig& cfg) {
  auto s = Searcher::Create(cfg);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(s).value() : nullptr;
}

std::string Describe(const Action& action) {
  if (auto* c = std::get_if<CreateAction>(&action)) {
    return "create " + c->request_id + " seed=" + std::to_string(c->trial_seed) + " " +
           c->hparams.dump();
  }
  if (auto* v = std::get_if<ValidateAfterAction>(&action)) {
    return "validate_after " + v->request_id + " " + std::to_string(v->length);
  }
  if (auto* c = std::get_if<CloseAction>(&action)) return "close " + c->request_id;
  const auto& s = std::get<ShutdownAction>(action);
  return std::string("shutdown cancel=") + (s.cancel ? "1" : "0") +
         " failure=" + (s.failure ? "1" : "0");
}

// Drives a searcher FIFO through the operations protocol: every Create is created, trains
// half way, completes its validation, and exits once closed. With `round_trip`, the searcher is
// snapshotted and restored after every event, and the restored snapshot must be identical.
class Driver {
 public:
  Driver(config::ExperimentConfig cfg, bool round_trip)
      : cfg_(std::move(cfg)), searcher_(Make(cfg_)), round_trip_(round_trip) {}

  void Run() {
    Push(searcher_->InitialOperations());
    RoundTrip();
    while (!queue_.empty()) {
      Action action = queue_.front();
      queue_.pop_front();
      if (auto* c = std::get_if<CreateAction>(&action)) {
        creates.push_back(*c);
        Push(searcher_->TrialCreated(c->request_id));
      } else if (auto* v = std::get_if<ValidateAfterAction>(&action)) {
        searcher_->SetTrialProgress(v->request_id, static_cast<double>(v->length) / 2);
        progress.push_back(searcher_->Progress());
        RoundTrip();
        auto result = searcher_->ValidationCompleted(v->request_id, 0.5, v->length);
        ASSERT_TRUE(result.ok()) << result.status().ToString();
        lengths[v->request_id].push_back(v->length);
        Push(*result);
      } else if (auto* c = std::get_if<CloseAction>(&action)) {
        Push(searcher_->TrialExited(c->request_id));
      } else {
        shutdowns.push_back(std::get<ShutdownAction>(action));
      }
      progress.push_back(searcher_->Progress());
      RoundTrip();
    }
  }

  Searcher& searcher() { return *searcher_; }

  std::vector<std::string> log;
  std::vector<CreateAction> creates;
  std::vector<ShutdownAction> shutdowns;
  std::map<std::string, std::vector<uint64_t>> lengths;
  std::vector<double> progress;

 private:
  void Push(const std::vector<Action>& actions) {
    for (const Action& a : actions) {
      log.push_back(Describe(a));
      queue_.push_back(a);
    }
  }

  void RoundTrip() {
    if (!round_trip_) return;
    json snapshot = searcher_->Snapshot();
    auto restored = Searcher::Restore(cfg_, snapshot);
    ASSERT_TRUE(restored.ok()) << restored.status().ToString();
    ASSERT_EQ((*restored)->Snapshot().dump(), snapshot.dump());
    searcher_ = std::move(restored).value();
  }

  config::ExperimentConfig cfg_;
  std::unique_ptr<Searcher> searcher_;
  bool round_trip_;
  std::deque<Action> queue_;
};

// Random max_trials 4, mct 2: two initial trials, four in all, each validated once at
// max_length, values in range, then one Shutdown.
TEST(RandomSearchTest, FourTrialsWithConcurrencyTwo) {
  config::ExperimentConfig cfg = Config(
      "{name: random, metric: loss, max_trials: 4, max_concurrent_trials: 2, "
      "max_length: {records: 19200}}");
  auto searcher = Make(cfg);
  EXPECT_EQ(searcher->InitialOperations().size(), 2u);

  Driver driver(cfg, false);
  driver.Run();
  ASSERT_EQ(driver.creates.size(), 4u);
  for (const CreateAction& c : driver.creates) {
    int64_t x = c.hparams["x"].get<int64_t>();
    EXPECT_GE(x, 0);
    EXPECT_LE(x, 10);
    EXPECT_EQ(c.hparams["bs"], 32);
    EXPECT_LT(c.trial_seed, 1u << 31);
    EXPECT_EQ(driver.lengths[c.request_id], (std::vector<uint64_t>{19200}));
  }
  ASSERT_EQ(driver.shutdowns.size(), 1u);
  EXPECT_FALSE(driver.shutdowns[0].cancel);
  EXPECT_FALSE(driver.shutdowns[0].failure);
  EXPECT_EQ(driver.log.back().rfind("shutdown", 0), 0u);
  EXPECT_DOUBLE_EQ(driver.searcher().Progress(), 1.0);
  for (size_t i = 1; i < driver.progress.size(); ++i) {
    EXPECT_GE(driver.progress[i], driver.progress[i - 1]) << "progress went down at " << i;
  }
}

// max_concurrent_trials 0 means no limit: every trial is created up front.
TEST(RandomSearchTest, ZeroConcurrencyCreatesAllUpFront) {
  auto searcher = Make(Config(
      "{name: random, metric: loss, max_trials: 5, max_concurrent_trials: 0, max_length: 10}"));
  EXPECT_EQ(searcher->InitialOperations().size(), 5u);
  EXPECT_TRUE(searcher->InitialOperations().empty()) << "initial operations act once";
}

// Single runs exactly one trial of max_length.
TEST(RandomSearchTest, SingleRunsOneTrial) {
  Driver driver(Config("{name: single, metric: loss, max_length: {batches: 500}}"), false);
  driver.Run();
  ASSERT_EQ(driver.creates.size(), 1u);
  EXPECT_EQ(driver.lengths[driver.creates[0].request_id], (std::vector<uint64_t>{500}));
  ASSERT_EQ(driver.shutdowns.size(), 1u);
}

// The first Create consumes the RNG as Determined does: sample, 16 bytes, seed.
TEST(RandomSearchTest, CreateMatchesRngOrderAndIsUuidV4) {
  config::ExperimentConfig cfg =
      Config("{name: random, metric: loss, max_trials: 1, max_length: 1}", 1234);
  auto searcher = Make(cfg);
  auto actions = searcher->InitialOperations();
  ASSERT_EQ(actions.size(), 1u);
  const auto& create = std::get<CreateAction>(actions[0]);
  NpRand rng(1234);
  CreateAction expect = NewCreateAction(cfg.hyperparameters, rng);
  EXPECT_EQ(create.request_id, expect.request_id);
  EXPECT_EQ(create.trial_seed, expect.trial_seed);
  EXPECT_EQ(create.hparams, expect.hparams);
  EXPECT_TRUE(std::regex_match(
      create.request_id,
      std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")))
      << create.request_id;
}

TEST(RandomSearchTest, UuidFormatting) {
  uint8_t bytes[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0xff, 0x77,
                       0xff, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
  EXPECT_EQ(UuidV4FromBytes(bytes), "00112233-4455-4f77-bf99-aabbccddeeff");
}

// Snapshot/restore after every event changes nothing: same actions, same progress.
TEST(RandomSearchTest, SnapshotRestoreAfterEveryEventIsTransparent) {
  for (const char* searcher_yaml :
       {"{name: random, metric: loss, max_trials: 7, max_concurrent_trials: 3, "
        "max_length: {batches: 300}}",
        "{name: single, metric: loss, max_length: {epochs: 2}}"}) {
    config::ExperimentConfig cfg = Config(searcher_yaml, 77);
    Driver plain(cfg, false), restored(cfg, true);
    plain.Run();
    restored.Run();
    EXPECT_EQ(plain.log, restored.log);
    EXPECT_EQ(plain.progress, restored.progress);
    EXPECT_EQ(plain.searcher().Snapshot().dump(), restored.searcher().Snapshot().dump());
  }
}

// A failed trial counts once even when its process exit follows; the experiment fails only
// when every trial failed.
TEST(RandomSearchTest, FailuresAndCancels) {
  config::ExperimentConfig cfg =
      Config("{name: random, metric: loss, max_trials: 2, max_length: 100}");
  {
    auto s = Make(cfg);
    auto initial = s->InitialOperations();
    ASSERT_EQ(initial.size(), 2u);
    std::string a = std::get<CreateAction>(initial[0]).request_id;
    std::string b = std::get<CreateAction>(initial[1]).request_id;
    s->TrialCreated(a);
    s->TrialCreated(b);
    EXPECT_TRUE(s->TrialExitedEarly(a, ExitedReason::kErrored).empty());
    EXPECT_TRUE(s->TrialExitedEarly(a, ExitedReason::kErrored).empty()) << "idempotent";
    EXPECT_TRUE(s->TrialExited(a).empty());
    auto last = s->TrialExitedEarly(b, ExitedReason::kErrored);
    ASSERT_EQ(last.size(), 1u);
    EXPECT_TRUE(std::get<ShutdownAction>(last[0]).failure);
    EXPECT_FALSE(std::get<ShutdownAction>(last[0]).cancel);
    EXPECT_TRUE(s->TrialExited(b).empty()) << "shutdown is emitted once";
  }
  {
    auto s = Make(cfg);
    auto initial = s->InitialOperations();
    std::string a = std::get<CreateAction>(initial[0]).request_id;
    std::string b = std::get<CreateAction>(initial[1]).request_id;
    EXPECT_TRUE(s->TrialExitedEarly(a, ExitedReason::kErrored).empty());
    auto last = s->TrialExitedEarly(b, ExitedReason::kUserCanceled);
    ASSERT_EQ(last.size(), 1u);
    EXPECT_FALSE(std::get<ShutdownAction>(last[0]).failure) << "one trial did not fail";
    EXPECT_FALSE(std::get<ShutdownAction>(last[0]).cancel);
  }
}

// Random replaces a trial with invalid hyperparameters at its exit; single does not.
TEST(RandomSearchTest, InvalidHpIsReplacedOnlyForRandom) {
  auto s = Make(Config("{name: random, metric: loss, max_trials: 1, max_length: 100}"));
  auto initial = s->InitialOperations();
  std::string a = std::get<CreateAction>(initial[0]).request_id;
  s->TrialCreated(a);
  EXPECT_TRUE(s->TrialExitedEarly(a, ExitedReason::kInvalidHp).empty()) << "no early shutdown";
  auto replacement = s->TrialExited(a);
  ASSERT_EQ(replacement.size(), 1u);
  std::string b = std::get<CreateAction>(replacement[0]).request_id;
  EXPECT_NE(a, b);
  EXPECT_DOUBLE_EQ(s->Progress(), 0.0) << "the replaced trial does not count";
  s->TrialCreated(b);
  ASSERT_TRUE(s->ValidationCompleted(b, 0.1, 100).ok());
  auto end = s->TrialExited(b);
  ASSERT_EQ(end.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<ShutdownAction>(end[0]));

  auto single = Make(Config("{name: single, metric: loss, max_length: 100}"));
  auto one = single->InitialOperations();
  std::string c = std::get<CreateAction>(one[0]).request_id;
  single->TrialCreated(c);
  auto done = single->TrialExitedEarly(c, ExitedReason::kInvalidHp);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<ShutdownAction>(done[0]));
  EXPECT_TRUE(single->TrialExited(c).empty());
}

// Validations must match the requested length and complete once; unknown ids are errors.
TEST(RandomSearchTest, ValidationCompletedChecks) {
  auto s = Make(Config("{name: single, metric: loss, max_length: {batches: 50}}"));
  std::string id = std::get<CreateAction>(s->InitialOperations()[0]).request_id;
  auto ops = s->TrialCreated(id);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(std::get<ValidateAfterAction>(ops[0]).length, 50u);
  EXPECT_TRUE(s->TrialCreated(id).empty()) << "TrialCreated is idempotent";
  EXPECT_EQ(s->ValidationCompleted(id, 1.0, 49).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s->ValidationCompleted("nope", 1.0, 50).status().code(), StatusCode::kNotFound);
  auto close = s->ValidationCompleted(id, 1.0, 50);
  ASSERT_TRUE(close.ok());
  ASSERT_EQ(close->size(), 1u);
  EXPECT_EQ(std::get<CloseAction>((*close)[0]).request_id, id);
  EXPECT_EQ(s->ValidationCompleted(id, 1.0, 50).status().code(),
            StatusCode::kFailedPrecondition);
}

// Progress follows reported units, clamped, and counts not-yet-created trials as zero.
TEST(RandomSearchTest, ProgressFromUnits) {
  auto s = Make(Config(
      "{name: random, metric: loss, max_trials: 2, max_concurrent_trials: 1, max_length: 100}"));
  EXPECT_DOUBLE_EQ(s->Progress(), 0.0);
  std::string id = std::get<CreateAction>(s->InitialOperations()[0]).request_id;
  s->TrialCreated(id);
  s->SetTrialProgress(id, 50);
  EXPECT_DOUBLE_EQ(s->Progress(), 0.25);
  s->SetTrialProgress(id, 500);
  EXPECT_DOUBLE_EQ(s->Progress(), 0.5);
}

// Searchers that are not implemented say so; a snapshot of another type is rejected.
TEST(RandomSearchTest, FactoryErrors) {
  config::ExperimentConfig custom = Config("{name: random, metric: loss, max_trials: 1}");
  custom.searcher.name = "custom";
  auto made = Searcher::Create(custom);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(made.status().message(), "searcher 'custom' is not supported");

  auto random = Make(Config("{name: random, metric: loss, max_trials: 1}"));
  config::ExperimentConfig single = Config("{name: single, metric: loss}");
  EXPECT_EQ(Searcher::Restore(single, random->Snapshot()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Searcher::Restore(single, json{{"version", 1}}).status().code(),
            StatusCode::kInvalidArgument);
}

// Without max_length the trial decides its own length: no ValidateAfter, done at exit.
TEST(RandomSearchTest, NoMaxLength) {
  auto s = Make(Config("{name: single, metric: loss}"));
  std::string id = std::get<CreateAction>(s->InitialOperations()[0]).request_id;
  EXPECT_TRUE(s->TrialCreated(id).empty());
  EXPECT_DOUBLE_EQ(s->Progress(), 0.0);
  auto end = s->TrialExited(id);
  ASSERT_EQ(end.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<ShutdownAction>(end[0]));
  EXPECT_DOUBLE_EQ(s->Progress(), 1.0);
}

}  // namespace
}  // namespace det::master::searcher
