#include "agent/warm_python.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/entrypoint.h"

namespace det::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(WarmPythonTest, PlainShellWordsSplitsOnlyWhatNeedsNoShell) {
  EXPECT_THAT(*PlainShellWords("  python3 train.py --lr=0.1\t-x "),
              ElementsAre("python3", "train.py", "--lr=0.1", "-x"));
  for (const char* text :
       {"python3 train.py > log", "python3 'a b'.py", "python3 $SCRIPT", "cd x && python3 t.py",
        "python3 *.py", "A=1 python3 t.py", "python3 t.py; true", "python3 ~/t.py", ""}) {
    EXPECT_FALSE(PlainShellWords(text).has_value()) << text;
  }
}

TEST(WarmPythonTest, PlansScriptsAndModulesThroughTheShellOrAList) {
  auto script = PlanWarmPython({"sh", "-c", "python3 -u train.py --epochs 2"}, {});
  ASSERT_TRUE(script.ok()) << script.status().message();
  EXPECT_EQ(script->script, "train.py");
  EXPECT_EQ(script->module, "");
  EXPECT_THAT(script->args, ElementsAre("--epochs", "2"));
  EXPECT_THAT(script->argv, ElementsAre("python3", "-u", "train.py", "--epochs", "2"));

  auto legacy = BuildEntrypointArgv("model_def:Trial", "/usr/bin/python3");
  ASSERT_TRUE(legacy.ok());
  auto module = PlanWarmPython(*legacy, {});
  ASSERT_TRUE(module.ok()) << module.status().message();
  EXPECT_EQ(module->module, "determined.launch.torch_distributed");
  EXPECT_THAT(module->args, ElementsAre("--", "--trial", "model_def:Trial"));
  EXPECT_EQ(module->argv[0], "/usr/bin/python3");
}

TEST(WarmPythonTest, RefusesWhatACopyOfTheInterpreterCannotBe) {
  struct Case {
    std::vector<std::string> argv;
    std::string why;
  };
  for (const Case& c :
       std::vector<Case>{{{"sh", "-c", "python3 train.py | tee log"}, "needs a shell"},
                         {{"bash", "train.sh"}, "does not start python"},
                         {{"python3", "-O", "train.py"}, "option -O"},
                         {{"python3", "-c", "print(1)"}, "option -c"},
                         {{"python3", "-m"}, "without a module"},
                         {{"python3"}, "without a script"},
                         {{"python2", "t.py"}, "does not start python"}}) {
    auto plan = PlanWarmPython(c.argv, {});
    ASSERT_FALSE(plan.ok()) << c.argv.back();
    EXPECT_EQ(plan.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_THAT(plan.status().message(), HasSubstr(c.why));
  }
  auto off = PlanWarmPython({"python3", "t.py"}, {{"DET_WARM_PYTHON", "False"}});
  ASSERT_FALSE(off.ok());
  EXPECT_THAT(off.status().message(), HasSubstr("DET_WARM_PYTHON=False"));
  EXPECT_TRUE(PlanWarmPython({"python3", "t.py"}, {{"DET_WARM_PYTHON", "1"}}).ok());
}

TEST(WarmPythonTest, PythonNames) {
  EXPECT_TRUE(IsPythonName("python"));
  EXPECT_TRUE(IsPythonName("python3"));
  EXPECT_TRUE(IsPythonName("python3.11"));
  EXPECT_FALSE(IsPythonName("python3."));
  EXPECT_FALSE(IsPythonName("python3.11-config"));
  EXPECT_FALSE(IsPythonName("ipython"));
}

TEST(WarmPythonTest, StartupVariablesMustMatchTheZygote) {
  std::map<std::string, std::string> zygote = {
      {"PYTHONUNBUFFERED", "1"}, {"PYTHONPATH", "/h"}, {"HOME", "/root"}, {"LANG", "C.UTF-8"}};
  auto trial = zygote;
  trial["PYTHONPATH"] = "/h:/ctx";  // sys.path is rebuilt in the child
  trial["DET_TRIAL_ID"] = "3";
  EXPECT_TRUE(CheckZygoteEnvironment(trial, zygote).ok());

  auto seeded = trial;
  seeded["PYTHONHASHSEED"] = "0";
  Status s = CheckZygoteEnvironment(seeded, zygote);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("PYTHONHASHSEED is \"0\" for the trial but unset"));

  auto no_lang = trial;
  no_lang.erase("LANG");
  EXPECT_THAT(CheckZygoteEnvironment(no_lang, zygote).message(), HasSubstr("LANG is unset"));
  auto other_locale = trial;
  other_locale["LC_ALL"] = "C";
  EXPECT_FALSE(CheckZygoteEnvironment(other_locale, zygote).ok());
}

TEST(WarmPythonTest, ZygoteEnvironmentIsWhatEveryTrialShares) {
  std::map<std::string, std::string> base = {
      {"PATH", "/bin"}, {"HOME", "/root"}, {"DET_MASTER_URL", "http://m:1"}};
  auto env = ZygoteEnvironment(base, "/opt/py/bin/python3", "/srv/harness", "/data");
  EXPECT_EQ(env["PYTHONPATH"], "/srv/harness");
  EXPECT_EQ(env["PYTHONUNBUFFERED"], "1");
  EXPECT_EQ(env["PATH"], "/opt/py/bin:/bin");
  EXPECT_EQ(env["DET_PYTHON_EXECUTABLE"], "/opt/py/bin/python3");
  EXPECT_EQ(env["DET_MASTER_URL"], "http://m:1");  // the agent's own, kept
  EXPECT_EQ(env[kZygoteMarkerEnv], "/data");
  for (const char* per_trial : {"DET_MASTER", "DET_CONTAINER_ID", "DET_SLOT_IDS", "DET_WORKDIR"}) {
    EXPECT_EQ(env.count(per_trial), 0u) << per_trial;
  }
  // A trial built from the same base matches it on every start-up variable.
  AgentEnv agent;
  agent.python = "/opt/py/bin/python3";
  agent.harness_path = "/srv/harness";
  agent.allocation_id = "1.a.1";
  EXPECT_TRUE(CheckZygoteEnvironment(BuildProcessEnv(base, {}, agent), env).ok());
}

}  // namespace
}  // namespace det::agent
