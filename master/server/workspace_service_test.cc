#include "master/server/workspace_service.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

class WorkspaceServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det_workspace_test_");
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
    service_ = std::make_unique<WorkspaceService>(store_.get());
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<WorkspaceService> service_;
};

TEST_F(WorkspaceServiceTest, BuiltInsExistAndAreImmutable) {
  auto ws = service_->GetWorkspace(1);
  ASSERT_TRUE(ws.ok());
  EXPECT_EQ(ws->name, "Uncategorized");
  EXPECT_TRUE(ws->immutable);
  auto p = service_->GetProject(1);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->key, "UNCAT");
  EXPECT_EQ(service_->RenameWorkspace(1, "x").status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(service_->SetProjectArchived(1, true).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(service_->DeleteProject(1, false).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(service_->ProjectOf(42), 1);
}

TEST_F(WorkspaceServiceTest, CreateRenameArchiveSurviveRestart) {
  auto ws = service_->CreateWorkspace("team", 2);
  ASSERT_TRUE(ws.ok()) << ws.status().ToString();
  EXPECT_EQ(service_->CreateWorkspace("team", 2).status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(service_->CreateWorkspace("", 2).status().code(), StatusCode::kInvalidArgument);
  auto p = service_->CreateProject(ws->id, "My Project", "d", "", 2);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->key, "MYPRO");
  auto p2 = service_->CreateProject(ws->id, "mypro", "", "", 2);
  ASSERT_TRUE(p2.ok());
  EXPECT_EQ(p2->key, "MYPR1");  // the derived key was taken
  EXPECT_EQ(service_->CreateProject(ws->id, "My Project", "", "", 2).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(service_->CreateProject(ws->id, "k", "", "toolong", 2).status().code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(service_->RenameWorkspace(ws->id, "team2").ok());
  ASSERT_TRUE(service_->SetWorkspaceArchived(ws->id, true).ok());
  EXPECT_EQ(service_->CreateProject(ws->id, "late", "", "", 2).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(service_->RenameWorkspace(ws->id, "team3").status().code(),
            StatusCode::kFailedPrecondition);  // archived: read-only
  Open();
  auto again = service_->GetWorkspace(ws->id);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->name, "team2");
  EXPECT_TRUE(again->archived);
  auto projects = service_->ListProjects(ws->id);
  ASSERT_TRUE(projects.ok());
  EXPECT_EQ(projects->size(), 2u);
  EXPECT_EQ(service_->ListProjects(99).status().code(), StatusCode::kNotFound);
}

TEST_F(WorkspaceServiceTest, MoveExperimentsAndDeleteRules) {
  auto ws = service_->CreateWorkspace("w", 1);
  ASSERT_TRUE(ws.ok());
  auto p = service_->CreateProject(ws->id, "p", "", "", 1);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(service_->MoveExperiment(7, p->id).ok());
  EXPECT_EQ(service_->ProjectOf(7), p->id);
  EXPECT_EQ(service_->MoveExperiment(7, 999).code(), StatusCode::kNotFound);
  Open();
  EXPECT_EQ(service_->ProjectOf(7), p->id);
  auto busy = [&] {
    std::set<int64_t> out;
    for (const auto& [e, pr] : service_->Placements()) out.insert(pr);
    return out;
  };
  EXPECT_EQ(service_->DeleteProject(p->id, busy().count(p->id) > 0).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(service_->DeleteWorkspace(ws->id, busy()).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(service_->SetProjectArchived(p->id, true).ok());
  EXPECT_EQ(service_->MoveExperiment(8, p->id).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(service_->MoveExperiment(7, 1).ok());
  EXPECT_EQ(service_->ProjectOf(7), 1);
  ASSERT_TRUE(service_->DeleteWorkspace(ws->id, busy()).ok());
  EXPECT_EQ(service_->GetProject(p->id).status().code(), StatusCode::kNotFound);
}

TEST_F(WorkspaceServiceTest, ProjectNotesAreSetAddedCheckedAndKept) {
  auto p = service_->CreateProject(1, "notes-proj", "", "", 1);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto set = service_->SetProjectNotes(
      p->id, nlohmann::json::array({{{"name", "a"}, {"contents", "x"}, {"extra", 1}}}));
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(*set, nlohmann::json::array({{{"name", "a"}, {"contents", "x"}}}));
  auto added = service_->AddProjectNote(p->id, {{"name", "b"}, {"contents", ""}});
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(added->size(), 2u);
  // The built-in project takes notes too.
  EXPECT_TRUE(service_->AddProjectNote(1, {{"name", "c"}, {"contents", "y"}}).ok());
  auto bad = service_->SetProjectNotes(p->id, nlohmann::json::array({{{"name", 3}}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("notes[0].name"), std::string::npos);
  EXPECT_FALSE(service_->AddProjectNote(p->id, {{"name", "n"}}).ok());
  EXPECT_EQ(service_->AddProjectNote(999, {{"name", "n"}, {"contents", ""}}).status().code(),
            StatusCode::kNotFound);
  Open();  // survives a restart
  auto again = service_->GetProject(p->id);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->notes.size(), 2u);
  EXPECT_EQ(again->notes[1]["name"], "b");
}

TEST(ProjectKeys, DerivedAndNormalized) {
  EXPECT_EQ(KeyFromName("ab-cd_efgh"), "ABCDE");
  EXPECT_EQ(KeyFromName("--"), "PROJ");
  EXPECT_EQ(*NormalizeProjectKey("ab1"), "AB1");
  EXPECT_FALSE(NormalizeProjectKey("a b").ok());
  EXPECT_FALSE(NormalizeProjectKey("").ok());
}

}  // namespace
}  // namespace det::master::server
