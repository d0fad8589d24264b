#include "master/core/secret_redact.h"

#include <gtest/gtest.h>

namespace det::master::core {
namespace {

using nlohmann::json;

TEST(SecretRedact, MasksStorageKeysOfEveryType) {
  json config = {{"name", "x"},
                 {"hyperparameters", {{"max_tokens", 5}}},
                 {"checkpoint_storage",
                  {{"type", "s3"}, {"bucket", "b"}, {"access_key", "AKIA"},
                   {"secret_key", "s3cr3t"}, {"connection_string", "cs"}, {"credential", "c"}}}};
  json shown = ShownConfig(config, json());
  EXPECT_EQ(shown["checkpoint_storage"]["access_key"], kRedacted);
  EXPECT_EQ(shown["checkpoint_storage"]["secret_key"], kRedacted);
  EXPECT_EQ(shown["checkpoint_storage"]["connection_string"], kRedacted);
  EXPECT_EQ(shown["checkpoint_storage"]["credential"], kRedacted);
  EXPECT_EQ(shown["checkpoint_storage"]["bucket"], "b");
  // Only the storage section is masked by name: a hyperparameter called *token* is not.
  EXPECT_EQ(shown["hyperparameters"]["max_tokens"], 5);
  EXPECT_EQ(config["checkpoint_storage"]["secret_key"], "s3cr3t");  // the input is untouched
}

TEST(SecretRedact, MasksTheMastersEnvironmentVariablesOnly) {
  json defaults = {{"environment_variables", {"API_KEY=k-123", "SHARED=1"}}};
  json config = {
      {"environment",
       {{"environment_variables",
         {{"cpu", {"API_KEY=k-123", "SHARED=1", "MINE=visible"}}, {"cuda", {"API_KEY=k-123"}},
          {"rocm", json::array()}}},
        {"registry_auth", {{"username", "u"}, {"password", "p"}}}}}};
  json shown = ShownConfig(config, defaults);
  const json& ev = shown["environment"]["environment_variables"];
  EXPECT_EQ(ev["cpu"], json({"API_KEY=********", "SHARED=********", "MINE=visible"}));
  EXPECT_EQ(ev["cuda"], json({"API_KEY=********"}));
  EXPECT_EQ(shown["environment"]["registry_auth"]["password"], kRedacted);
  EXPECT_EQ(shown["environment"]["registry_auth"]["username"], "u");
  EXPECT_EQ(shown.dump().find("k-123"), std::string::npos);
}

TEST(SecretRedact, RedactSecretsMasksSecretNamesAtAnyDepth) {
  json j = {{"db", {{"password", "pw"}}}, {"list", {{{"agent_token", "t"}}}}, {"port", 1}};
  RedactSecrets(j);
  EXPECT_EQ(j["db"]["password"], kRedacted);
  EXPECT_EQ(j["list"][0]["agent_token"], kRedacted);
  EXPECT_EQ(j["port"], 1);
}

}  // namespace
}  // namespace det::master::core
