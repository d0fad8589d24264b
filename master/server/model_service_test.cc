// ModelService against a real SQLite store in a temp dir.
#include "master/server/model_service.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

using nlohmann::json;

class ModelServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det_model_service_");
    auto s = store::SqliteStore::Open((dir_ / "det.db").string());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
    ASSERT_TRUE(store_->EnsureBuiltinUsers(std::nullopt).ok());
    service_ = std::make_unique<ModelService>(store_.get(), &clock_);
  }
  void TearDown() override {
    service_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // An experiment with one trial and a checkpoint per state given; returns the experiment id.
  int64_t AddCheckpoints(const std::vector<std::pair<std::string, std::string>>& uuid_states) {
    store::ExperimentRow e;
    e.state = "COMPLETED";
    e.config = {{"name", "x"}};
    e.owner_id = 1;
    e.job_id = "j";
    auto eid = store_->InsertExperiment(e, "");
    EXPECT_TRUE(eid.ok());
    store::TrialRow t;
    t.experiment_id = *eid;
    t.request_id = "r" + std::to_string(*eid);
    t.hparams = json::object();
    t.state = "COMPLETED";
    t.task_id = "t";
    auto tid = store_->InsertTrial(t);
    EXPECT_TRUE(tid.ok());
    for (const auto& [uuid, state] : uuid_states) {
      store::CheckpointRow c;
      c.uuid = uuid;
      c.trial_id = *tid;
      c.state = state;
      c.metadata = {{"steps_completed", 1}};
      EXPECT_TRUE(store_->AddCheckpoint(c).ok());
    }
    return *eid;
  }

  Result<ModelView> Create(const std::string& name, int64_t user = 1, json labels = json::array()) {
    CreateModelRequest req;
    req.name = name;
    req.labels = std::move(labels);
    return service_->Create(req, ModelCaller{user, user == 1});
  }

  Result<ModelVersionView> Register(const std::string& model, const std::string& uuid,
                                    int64_t user = 1) {
    RegisterVersionRequest req;
    req.checkpoint_uuid = uuid;
    return service_->RegisterVersion(model, req, ModelCaller{user, user == 1});
  }

  std::filesystem::path dir_;
  FakeClock clock_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<ModelService> service_;
};

TEST(ModelNameTest, RulesOfDetermined) {
  EXPECT_TRUE(ValidateModelName("mnist cnn").ok());
  EXPECT_TRUE(ValidateModelName("v2").ok());
  for (const char* bad : {"", "   ", "a  b", "a/b", "a\\b", "123"}) {
    Status st = ValidateModelName(bad);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(st.message().find("name"), std::string::npos) << st.message();
  }
}

TEST(ModelLabelsTest, DuplicatesDroppedAndNonStringsRefused) {
  auto l = ParseLabels(json{"b", "a", "b"}, "labels");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(*l, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(ParseLabels(json{"a", 1}, "labels").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseLabels(json("a"), "labels").status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ModelServiceTest, CreateGetByNameOrIdAndUniqueNames) {
  auto m = Create("mnist", 1, json{"vision", "vision", "small"});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->username, "admin");
  EXPECT_EQ(m->row.workspace_id, 1);
  EXPECT_EQ(m->row.labels, (std::vector<std::string>{"vision", "small"}));
  EXPECT_EQ(service_->Get("mnist")->row.id, m->row.id);
  EXPECT_EQ(service_->Get(std::to_string(m->row.id))->row.name, "mnist");
  EXPECT_EQ(service_->Get("nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(service_->Get("99999999999999999999").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Create("mnist").status().code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(Create("MNIST").ok());  // case-sensitive
  EXPECT_EQ(Create("12").status().code(), StatusCode::kInvalidArgument);

  CreateModelRequest req;
  req.name = "elsewhere";
  req.workspace_name = "no such workspace";
  EXPECT_EQ(service_->Create(req, {1, true}).status().code(), StatusCode::kNotFound);
  req.workspace_name.reset();
  req.metadata = json::array();
  EXPECT_EQ(service_->Create(req, {1, true}).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ModelServiceTest, VersionsNeedAnExistingCompletedCheckpoint) {
  AddCheckpoints({{"good", "COMPLETED"}, {"partial", "PARTIALLY_DELETED"}});
  ASSERT_TRUE(Create("m").ok());
  EXPECT_EQ(Register("m", "missing").status().code(), StatusCode::kNotFound);
  Status partial = Register("m", "partial").status();
  EXPECT_EQ(partial.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(partial.message().find("COMPLETED"), std::string::npos);

  auto v1 = Register("m", "good");
  clock_.Advance(10);
  auto v2 = Register("m", "good");
  ASSERT_TRUE(v1.ok() && v2.ok()) << v1.status().ToString();
  EXPECT_EQ(v1->row.version, 1);
  EXPECT_EQ(v2->row.version, 2);
  EXPECT_EQ(v2->model.row.num_versions, 2);
  EXPECT_EQ(v2->checkpoint.uuid, "good");
  EXPECT_EQ(service_->Get("m")->row.num_versions, 2);

  ModelView m = *service_->Get("m");
  auto desc = service_->ListVersions(m, "SORT_BY_VERSION", "ORDER_BY_DESC");
  ASSERT_TRUE(desc.ok());
  ASSERT_EQ(desc->size(), 2u);
  EXPECT_EQ((*desc)[0].row.version, 2);
  auto by_number = service_->ListVersions(m, "4", "1");  // enums as numbers
  ASSERT_TRUE(by_number.ok());
  EXPECT_EQ((*by_number)[0].row.version, 1);
  EXPECT_EQ(service_->ListVersions(m, "SORT_BY_NAME", "").status().code(),
            StatusCode::kInvalidArgument);

  ASSERT_TRUE(service_->DeleteVersion("m", 2, {1, true}).ok());
  EXPECT_EQ(service_->GetVersion("m", 2).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Register("m", "good")->row.version, 2);  // max + 1
}

TEST_F(ModelServiceTest, ArchivedModelsRefuseChangesAndVersions) {
  AddCheckpoints({{"c", "COMPLETED"}});
  ASSERT_TRUE(Create("m").ok());
  ASSERT_TRUE(service_->SetArchived("m", true).ok());
  EXPECT_TRUE(service_->Get("m")->row.archived);
  EXPECT_EQ(service_->Patch("m", {{"description", "d"}}).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(Register("m", "c").status().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(service_->SetArchived("m", false).ok());
  EXPECT_TRUE(Register("m", "c").ok());
}

TEST_F(ModelServiceTest, PatchReplacesMetadataAndLabelsAndRenames) {
  CreateModelRequest req;
  req.name = "m";
  req.metadata = {{"a", 1}, {"b", 2}};
  ASSERT_TRUE(service_->Create(req, {1, true}).ok());
  ASSERT_TRUE(Create("other").ok());
  clock_.Advance(5);
  auto p = service_->Patch("m", {{"metadata", {{"c", 3}}},
                                 {"labels", {"x", "y", "x"}},
                                 {"description", "d"},
                                 {"notes", "n"}});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->row.metadata, (json{{"c", 3}}));
  EXPECT_EQ(p->row.labels, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(p->row.description, "d");
  EXPECT_EQ(p->row.notes, "n");
  EXPECT_GT(p->row.last_updated_time, p->row.creation_time);
  EXPECT_EQ(service_->Patch("m", {{"name", "other"}}).status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(service_->Patch("m", {{"name", "a/b"}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(service_->Patch("m", {{"labels", "x"}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(service_->Patch("m", {{"workspaceId", 7}}).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(service_->Patch("m", {{"name", "renamed"}}).ok());
  EXPECT_TRUE(service_->Get("renamed").ok());
  EXPECT_EQ(service_->Get("m").status().code(), StatusCode::kNotFound);
}

TEST_F(ModelServiceTest, PatchVersionFields) {
  AddCheckpoints({{"c", "COMPLETED"}});
  ASSERT_TRUE(Create("m").ok());
  ASSERT_TRUE(Register("m", "c").ok());
  auto v = service_->PatchVersion("m", 1,
                                  {{"name", "best"},
                                   {"comment", "c"},
                                   {"notes", "n"},
                                   {"metadata", {{"k", "v"}}},
                                   {"labels", {"l"}}});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->row.name, "best");
  EXPECT_EQ(v->row.metadata["k"], "v");
  auto again = service_->GetVersion("m", 1);
  EXPECT_EQ(again->row.comment, "c");
  EXPECT_EQ(again->row.notes, "n");
  EXPECT_EQ(again->row.labels, (std::vector<std::string>{"l"}));
  EXPECT_EQ(service_->PatchVersion("m", 1, {{"name", 5}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(service_->PatchVersion("m", 9, json::object()).status().code(), StatusCode::kNotFound);
}

TEST_F(ModelServiceTest, OnlyOwnersAndAdminsDelete) {
  AddCheckpoints({{"c", "COMPLETED"}});
  ASSERT_TRUE(Create("mine", /*user=*/2).ok());  // user 2: determined, not an admin
  ASSERT_TRUE(Create("admins", 1).ok());
  ASSERT_TRUE(Register("admins", "c", 1).ok());
  EXPECT_EQ(service_->DeleteVersion("admins", 1, {2, false}).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(service_->Delete("admins", {2, false}).code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(service_->Delete("mine", {2, false}).ok());
  EXPECT_TRUE(service_->Delete("admins", {1, true}).ok());
  EXPECT_TRUE(store_->ListModelVersionsForCheckpoints({"c"})->empty());
}

TEST_F(ModelServiceTest, ListFiltersAndSorts) {
  CreateModelRequest a;
  a.name = "alpha";
  a.description = "Image classifier";
  a.labels = {"vision"};
  ASSERT_TRUE(service_->Create(a, {1, true}).ok());
  clock_.Advance(10);
  CreateModelRequest b;
  b.name = "Beta";
  b.labels = {"text", "vision"};
  ASSERT_TRUE(service_->Create(b, {2, false}).ok());
  clock_.Advance(10);
  ASSERT_TRUE(Create("gamma", 1, json{"audio"}).ok());
  ASSERT_TRUE(service_->SetArchived("gamma", true).ok());

  auto names = [&](const ModelQuery& q) {
    std::vector<std::string> out;
    auto r = service_->List(q);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok()) {
      for (const auto& v : *r) out.push_back(v.row.name);
    }
    return out;
  };
  ModelQuery q;
  EXPECT_EQ(names(q), (std::vector<std::string>{"alpha", "Beta", "gamma"}));
  q.order_by = "ORDER_BY_DESC";
  EXPECT_EQ(names(q), (std::vector<std::string>{"gamma", "Beta", "alpha"}));
  q = {};
  q.sort_by = "SORT_BY_NAME";
  EXPECT_EQ(names(q), (std::vector<std::string>{"Beta", "alpha", "gamma"}));  // byte order
  q = {};
  q.name = "ET";
  EXPECT_EQ(names(q), (std::vector<std::string>{"Beta"}));
  q = {};
  q.description = "classif";
  EXPECT_EQ(names(q), (std::vector<std::string>{"alpha"}));
  q = {};
  q.labels = {"vision"};
  EXPECT_EQ(names(q), (std::vector<std::string>{"alpha", "Beta"}));
  q = {};
  q.archived = false;
  EXPECT_EQ(names(q), (std::vector<std::string>{"alpha", "Beta"}));
  q = {};
  q.users = {"determined"};
  EXPECT_EQ(names(q), (std::vector<std::string>{"Beta"}));
  q = {};
  q.user_ids = {1};
  EXPECT_EQ(names(q), (std::vector<std::string>{"alpha", "gamma"}));
  q = {};
  q.workspace_ids = {2};
  EXPECT_TRUE(names(q).empty());
  q = {};
  q.workspace_names = {"Uncategorized"};
  EXPECT_EQ(names(q).size(), 3u);
  q = {};
  q.sort_by = "SORT_BY_BOGUS";
  EXPECT_EQ(service_->List(q).status().code(), StatusCode::kInvalidArgument);

  auto labels = service_->Labels(std::nullopt);
  ASSERT_TRUE(labels.ok());
  EXPECT_EQ(*labels, (std::vector<std::string>{"vision", "audio", "text"}));
}

TEST_F(ModelServiceTest, RegisteredCheckpointsAreRefused) {
  AddCheckpoints({{"c1", "COMPLETED"}, {"c2", "COMPLETED"}});
  ASSERT_TRUE(Create("m").ok());
  ASSERT_TRUE(Register("m", "c1").ok());
  EXPECT_TRUE(RefuseRegisteredCheckpoints(store_.get(), {"c2"}, "deleted").ok());
  Status st = RefuseRegisteredCheckpoints(store_.get(), {"c2", "c1"}, "deleted");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("c1 is version 1 of \"m\""), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find("c2"), std::string::npos) << st.message();
  EXPECT_EQ(*RegisteredCheckpoints(store_.get(), {"c1", "c2"}), (std::set<std::string>{"c1"}));
  ASSERT_TRUE(service_->DeleteVersion("m", 1, {1, true}).ok());
  EXPECT_TRUE(RefuseRegisteredCheckpoints(store_.get(), {"c1"}, "deleted").ok());
}

TEST_F(ModelServiceTest, VersionMetricsComeFromTrialsLinkedToThatVersion) {
  int64_t exp = AddCheckpoints({{"c", "COMPLETED"}});
  int64_t trial = (*store_->ListTrials(exp))[0].id;
  auto m = Create("m");
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(Register("m", "c").ok());
  ASSERT_TRUE(Register("m", "c").ok());
  store::TrialSourceInfoRow link;
  link.trial_id = trial;
  link.checkpoint_uuid = "c";
  link.source_type = "TRIAL_SOURCE_INFO_TYPE_INFERENCE";
  link.model_id = m->row.id;
  link.model_version = 2;
  ASSERT_TRUE(store_->AddTrialSourceInfo(link).ok());
  store::MetricRow metric;
  metric.trial_id = trial;
  metric.total_batches = 3;
  metric.group = "inference";
  metric.metrics = {{"avg_metrics", {{"acc", 0.9}}}};
  ASSERT_TRUE(store_->AddMetrics(metric).ok());
  auto v2 = service_->VersionTrialMetrics("m", 2, "", "");
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  ASSERT_EQ(v2->size(), 1u);
  EXPECT_EQ((*v2)[0].total_batches, 3);
  EXPECT_TRUE(service_->VersionTrialMetrics("m", 1, "", "")->empty());
  EXPECT_TRUE(service_->VersionTrialMetrics("m", 2, "", "training")->empty());
  EXPECT_EQ(service_->VersionTrialMetrics("m", 3, "", "").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace det::master::server
