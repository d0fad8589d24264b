// Command-line validation of the det commands: these fail with exit status 2 before any
// request is made (the master address points nowhere).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/cli_context.h"

namespace det::cli {
namespace {

int RunDet(std::vector<std::string> args) {
  args.insert(args.begin(), {"det", "-m", "http://127.0.0.1:9"});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return RunCli(static_cast<int>(argv.size()), argv.data());
}

TEST(CommandLineTest, JobUpdateNeedsExactlyOneChange) {
  EXPECT_EQ(RunDet({"job", "update", "abc"}), 2);
  EXPECT_EQ(RunDet({"job", "update", "abc", "--priority", "1", "--weight", "2"}), 2);
  EXPECT_EQ(RunDet({"job", "update", "abc", "--priority", "x"}), 2);
}

TEST(CommandLineTest, JobUpdateBatchItemsAreChecked) {
  EXPECT_EQ(RunDet({"job", "update-batch"}), 2);
  EXPECT_EQ(RunDet({"job", "update-batch", "a.priority=1", "b.bogus=2"}), 2);
  EXPECT_EQ(RunDet({"job", "update-batch", "nodot"}), 2);
}

TEST(CommandLineTest, ExperimentSetValues) {
  EXPECT_EQ(RunDet({"experiment", "set", "max-slots", "1", "many"}), 2);
  EXPECT_EQ(RunDet({"experiment", "set", "weight", "1", "heavy"}), 2);
  EXPECT_EQ(RunDet({"experiment", "set", "priority", "1", "1.5"}), 2);
  EXPECT_EQ(RunDet({"experiment", "set", "gc-policy", "1", "--save-trial-best", "1"}), 2);
  EXPECT_EQ(RunDet({"experiment", "label", "add", "1"}), 2);
  EXPECT_EQ(RunDet({"experiment", "list-checkpoints", "x"}), 2);
}

TEST(CommandLineTest, CheckpointArguments) {
  EXPECT_EQ(RunDet({"checkpoint", "download", "u", "--mode", "sideways"}), 2);
  EXPECT_EQ(RunDet({"checkpoint", "describe"}), 2);
  EXPECT_EQ(RunDet({"trial", "kill"}), 2);
  EXPECT_EQ(RunDet({"trial", "describe", "1", "--json", "--csv"}), 2);
}

TEST(CommandLineTest, DeployDbChoices) {
  EXPECT_EQ(RunDet({"deploy", "local", "cluster-up", "--db", "mysql"}), 2);
  EXPECT_EQ(RunDet({"deploy", "local", "master-up", "--db", "pg://x"}), 2);
}

TEST(CommandLineTest, UnreachableMasterIsExit1) {
  EXPECT_EQ(RunDet({"trial", "kill", "3"}), 1);
}

}  // namespace
}  // namespace det::cli
