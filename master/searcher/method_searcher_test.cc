// MethodSearcher's pending lengths: the first is kept inline and the others aside, which must not
// show in snapshots or in which validations are accepted.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "master/searcher/searcher.h"
#include "master/searcher/searcher_test_util.h"

namespace det::master::searcher {
namespace {

using nlohmann::json;

TEST(MethodSearcherPendingTest, SeveralPendingLengthsRoundTripAndAreTakenInAnyOrder) {
  config::ExperimentConfig cfg = testing::Config(
      "{name: adaptive_asha, metric: loss, max_length: {batches: 1000}, max_trials: 4}");
  auto searcher = std::move(Searcher::Create(cfg)).value();
  std::vector<Action> initial = searcher->InitialOperations();
  ASSERT_FALSE(initial.empty());
  std::string id = std::get<CreateAction>(initial[0]).request_id;
  std::vector<Action> created = searcher->TrialCreated(id);
  ASSERT_EQ(created.size(), 1u);
  uint64_t length = std::get<ValidateAfterAction>(created[0]).length;

  // A trial that owes three validations (no method asks for that today; snapshots may hold it).
  json snapshot = searcher->Snapshot();
  snapshot["trials"][id]["pending"] = json::array({length, 7, 9});
  auto restored = std::move(Searcher::Restore(cfg, snapshot)).value();
  EXPECT_EQ(restored->Snapshot().dump(), snapshot.dump());

  auto nan = restored->ValidationCompleted(id, std::nan(""), 9);
  ASSERT_FALSE(nan.ok());
  EXPECT_NE(nan.status().ToString().find("searcher metric"), std::string::npos);
  auto unknown = restored->ValidationCompleted(id, 1.0, 8);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().ToString().find("no pending validation at length 8"),
            std::string::npos);
  EXPECT_EQ(restored->Snapshot().dump(), snapshot.dump());  // rejected events change nothing

  ASSERT_TRUE(restored->ValidationCompleted(id, 1.0, length).ok());
  EXPECT_EQ(restored->Snapshot()["trials"][id]["pending"], json::array({7, 9}));
  // The other two stay owed (the method rejects them, as it owes the trial nothing at those
  // lengths, but the bookkeeping consumed each once).
  (void)restored->ValidationCompleted(id, 1.0, 9);
  EXPECT_EQ(restored->Snapshot()["trials"][id]["pending"], json::array({7}));
  restored->TrialExitedEarly(id, ExitedReason::kErrored);
  EXPECT_EQ(restored->Snapshot()["trials"][id]["pending"], json::array());

  auto again = std::move(Searcher::Restore(cfg, restored->Snapshot())).value();
  EXPECT_EQ(again->Snapshot().dump(), restored->Snapshot().dump());
}

}  // namespace
}  // namespace det::master::searcher
