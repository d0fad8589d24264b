#include "master/server/template_service.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

using nlohmann::json;
using store::TemplateRow;

class TemplateServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det_template_test_");
    Open();
  }
  void TearDown() override {
    service_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Open() {
    service_.reset();
    store_.reset();
    auto s = store::SqliteStore::Open((dir_ / "det.db").string());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
    service_ = std::make_unique<TemplateService>(store_.get());
  }
  static TemplateRow Row(const std::string& name, json config, int64_t ws = 0) {
    TemplateRow r;
    r.name = name;
    r.config = std::move(config);
    r.workspace_id = ws;
    return r;
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<TemplateService> service_;
};

TEST_F(TemplateServiceTest, CreateGetListSurvivesRestart) {
  auto a = service_->Create(Row("gpu-defaults", {{"description", "a"}}));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->workspace_id, 1);  // 0 = the default workspace
  ASSERT_TRUE(service_->Create(Row("Other", {{"labels", {"x"}}})).ok());
  Open();
  auto got = service_->Get("gpu-defaults");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->config["description"], "a");
  auto all = service_->List("", {}, false);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "Other");  // by name
  auto filtered = service_->List("GPU", {}, false);
  ASSERT_TRUE(filtered.ok());
  ASSERT_EQ(filtered->size(), 1u);
  EXPECT_EQ((*filtered)[0].name, "gpu-defaults");
  EXPECT_TRUE(service_->List("", {7}, false)->empty());
  EXPECT_EQ(service_->List("", {}, true)->front().name, "gpu-defaults");
}

TEST_F(TemplateServiceTest, RefusesBadInput) {
  EXPECT_EQ(service_->Create(Row("", json::object())).status().code(),
            StatusCode::kInvalidArgument);
  auto not_object = service_->Create(Row("t", json::array()));
  EXPECT_EQ(not_object.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(not_object.status().message().find("config"), std::string::npos);
  EXPECT_EQ(service_->Create(Row("t", json::object(), 5)).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(service_->Create(Row("t", json::object())).ok());
  EXPECT_EQ(service_->Create(Row("t", json::object())).status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(service_->Get("missing").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(service_->Delete("missing").code(), StatusCode::kNotFound);
}

TEST_F(TemplateServiceTest, PutSetConfigRenameDelete) {
  ASSERT_TRUE(service_->Put(Row("t", {{"description", "one"}})).ok());
  ASSERT_TRUE(service_->Put(Row("t", {{"description", "two"}})).ok());
  EXPECT_EQ(service_->Get("t")->config["description"], "two");
  auto set = service_->SetConfig("t", {{"description", "three"}});
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(service_->Get("t")->config["description"], "three");
  EXPECT_EQ(service_->SetConfig("nope", json::object()).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(service_->Create(Row("u", json::object())).ok());
  EXPECT_EQ(service_->Rename("t", "u").status().code(), StatusCode::kAlreadyExists);
  auto renamed = service_->Rename("t", "v");
  ASSERT_TRUE(renamed.ok());
  EXPECT_EQ(renamed->config["description"], "three");
  EXPECT_EQ(service_->Get("t").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(service_->Delete("v").ok());
  EXPECT_EQ(service_->Get("v").status().code(), StatusCode::kNotFound);
}

TEST_F(TemplateServiceTest, ApplyMergesTemplateUnderConfig) {
  ASSERT_TRUE(service_
                  ->Create(Row("t", json::parse(R"({"description": "tpl",
      "resources": {"slots_per_trial": 4}, "searcher": {"name": "single", "metric": "loss"}})")))
                  .ok());
  auto merged = service_->Apply(
      "t", json::parse(R"({"resources": {"slots_per_trial": 1}, "searcher": {"name": "single",
                           "max_length": {"batches": 5}}})"));
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ((*merged)["description"], "tpl");
  EXPECT_EQ((*merged)["resources"]["slots_per_trial"], 1);
  EXPECT_EQ((*merged)["searcher"]["metric"], "loss");
  EXPECT_EQ(service_->Apply("nope", json::object()).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace det::master::server
