// SearcherJournalService over a real SQLite store in a temp dir: what it writes (a record per
// change, a full snapshot when the journal outgrows it) and what Load rebuilds.
#include "master/server/searcher_journal_service.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <future>
#include <optional>
#include <random>
#include <set>

#include "common/test_dir.h"
#include "master/config/experiment_config.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kConfig[] =
    "entrypoint: model_def:Trial\n"
    "hyperparameters: {x: {type: double, minval: 0, maxval: 1}}\n"
    "searcher: {name: random, metric: loss, max_trials: 3, max_length: {batches: 10}}\n";

// The service's view of the trials (as the master builds it from its map).
SearcherJournalService::Trials Views(
    const std::vector<std::pair<std::string, SearcherTrialState>>& trials) {
  SearcherJournalService::Trials views;
  for (const auto& [rid, t] : trials) views.emplace_back(rid, t);
  return views;
}

class SearcherJournalServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det-searcher-journal-");
    auto opened = store::SqliteStore::Open((dir_ / "determined.db").string());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
    ASSERT_TRUE(store_->EnsureBuiltinUsers(std::nullopt).ok());  // the experiment's owner
    auto cfg = config::ParseExperimentConfig(kConfig, config::ConfigDefaults{});
    ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
    cfg_ = *cfg;
    store::ExperimentRow exp;
    exp.state = "ACTIVE";
    exp.config = cfg_.defaulted;
    exp.owner_id = 1;
    exp.snapshot = json::object();
    auto id = store_->InsertExperiment(exp, "");
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    exp_id_ = *id;
    searcher_ = std::make_unique<searcher::JournaledSearcher>(
        std::move(searcher::Searcher::Create(cfg_)).value());
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  // Persist, then wait for the writer to store what it queued.
  Status PersistNow(SearcherJournalService& journal, const SearcherHeader& header,
                    std::vector<std::pair<std::string, SearcherTrialState>>& trials) {
    DET_RETURN_IF_ERROR(journal.Persist(exp_id_, *searcher_, header, Views(trials)));
    return journal.Flush();
  }

  size_t JournalRows() {
    auto rows = store_->ListSearcherEvents(exp_id_);
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? rows->size() : 0;
  }

  // What a restart rebuilds: snapshot text of the restored, replayed searcher + merged trials.
  std::string Restored(SearcherJournalService& journal, SearcherHeader* header = nullptr) {
    EXPECT_TRUE(journal.Flush().ok());
    auto text = store_->GetExperimentSnapshotText(exp_id_);
    EXPECT_TRUE(text.ok());
    auto loaded = journal.Load(exp_id_, json::parse(*text));
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    auto s = searcher::Searcher::Restore(cfg_, loaded->snapshot["searcher"]);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_TRUE(searcher::JournaledSearcher::Replay(**s, loaded->events).ok());
    if (header) {
      header->initialized = loaded->snapshot.value("initialized", false);
      header->shutdown.reset();
      if (loaded->snapshot.contains("shutdown")) {
        header->shutdown = searcher::ShutdownAction{loaded->snapshot["shutdown"]["cancel"],
                                                    loaded->snapshot["shutdown"]["failure"]};
      }
    }
    return (*s)->Snapshot().dump() + loaded->snapshot["trials"].dump();
  }

  std::string Live(const std::vector<std::pair<std::string, SearcherTrialState>>& trials) {
    json t = json::object();
    for (const auto& [rid, st] : trials) t[rid] = st.ToJson();
    return searcher_->Snapshot().dump() + t.dump();
  }

  fs::path dir_;
  std::unique_ptr<store::Store> store_;
  config::ExperimentConfig cfg_;
  int64_t exp_id_ = 0;
  std::unique_ptr<searcher::JournaledSearcher> searcher_;
};

TEST_F(SearcherJournalServiceTest, FirstPersistIsFullThenOneRecordPerChange) {
  SearcherJournalService journal(store_.get());
  SearcherHeader header;
  header.initialized = true;
  std::vector<std::pair<std::string, SearcherTrialState>> trials;
  std::vector<searcher::Action> created = searcher_->InitialOperations();
  ASSERT_EQ(created.size(), 3u);
  ASSERT_TRUE(PersistNow(journal, header, trials).ok());
  EXPECT_EQ(journal.stats().full_snapshots, 1);
  EXPECT_EQ(JournalRows(), 0u);

  for (const auto& a : created) {
    const auto& c = std::get<searcher::CreateAction>(a);
    trials.emplace_back(c.request_id, SearcherTrialState{});
    for (const auto& v : searcher_->TrialCreated(c.request_id)) {
      trials.back().second.ops.push_back(std::get<searcher::ValidateAfterAction>(v).length);
    }
    ASSERT_TRUE(PersistNow(journal, header, trials).ok());
  }
  EXPECT_EQ(JournalRows(), 3u);
  EXPECT_EQ(journal.stats().full_snapshots, 1);
  // Nothing changed: nothing written.
  ASSERT_TRUE(PersistNow(journal, header, trials).ok());
  EXPECT_EQ(JournalRows(), 3u);

  // A completion changes one trial: its record carries that trial only.
  trials[1].second.ops.clear();
  trials[1].second.completed_op = 10;
  auto actions = searcher_->ValidationCompleted(trials[1].first, 0.5, 10);
  ASSERT_TRUE(actions.ok());
  ASSERT_TRUE(PersistNow(journal, header, trials).ok());
  auto rows = store_->ListSearcherEvents(exp_id_);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 4u);
  json last = json::parse(rows->back().second);
  EXPECT_EQ(last["tr"].size(), 1u) << last.dump();
  EXPECT_TRUE(last["tr"].contains(trials[1].first)) << last.dump();
  EXPECT_EQ(last["tr"][trials[1].first], trials[1].second.ToJson()) << last.dump();
  EXPECT_EQ(last["ev"][0][0], "v") << last.dump();

  // A restart (a fresh service over the same store) rebuilds exactly the live state.
  SearcherJournalService after_restart(store_.get());
  EXPECT_EQ(Restored(after_restart), Live(trials));
}

TEST_F(SearcherJournalServiceTest, JournalPastTheSnapshotSizeBecomesAFullSnapshot) {
  // A tiny threshold: the journal is rolled into a full snapshot as soon as it outgrows one.
  SearcherJournalService journal(store_.get(),
                                 SearcherJournalService::Options{.min_journal_bytes = 1});
  SearcherHeader header;
  header.initialized = true;
  std::vector<std::pair<std::string, SearcherTrialState>> trials;
  ASSERT_TRUE(PersistNow(journal, header, trials).ok());
  std::vector<searcher::Action> created = searcher_->InitialOperations();
  size_t max_rows = 0;
  for (int round = 0; round < 40; ++round) {
    for (const auto& a : created) {
      const auto& c = std::get<searcher::CreateAction>(a);
      searcher_->SetTrialProgress(c.request_id, round);
    }
    header.initialized = round % 2 == 0;  // the header changes too
    ASSERT_TRUE(PersistNow(journal, header, trials).ok());
    max_rows = std::max(max_rows, JournalRows());
    SearcherJournalService restarted(store_.get());
    SearcherHeader restored_header;
    ASSERT_EQ(Restored(restarted, &restored_header), Live(trials)) << "round " << round;
    EXPECT_EQ(restored_header.initialized, header.initialized) << "round " << round;
  }
  EXPECT_GT(journal.stats().full_snapshots, 1) << "the journal was never rolled up";
  EXPECT_GT(journal.stats().records, 0) << "every persist wrote a full snapshot";
  EXPECT_LT(max_rows, 40u) << "the full snapshot truncates the journal";
}

TEST_F(SearcherJournalServiceTest, AFailedAppendMakesTheNextPersistFull) {
  SearcherJournalService journal(store_.get());
  SearcherHeader header;
  std::vector<std::pair<std::string, SearcherTrialState>> trials;
  ASSERT_TRUE(PersistNow(journal, header, trials).ok());
  searcher_->InitialOperations();
  // Another writer took the next sequence number: the append fails and its events are lost
  // from the journal.
  ASSERT_TRUE(store_->AppendSearcherEvent(exp_id_, 0, "{}").ok());
  header.initialized = true;
  EXPECT_FALSE(PersistNow(journal, header, trials).ok());
  int64_t fulls = journal.stats().full_snapshots;
  ASSERT_TRUE(PersistNow(journal, header, trials).ok());
  EXPECT_EQ(journal.stats().full_snapshots, fulls + 1);
  EXPECT_EQ(JournalRows(), 0u) << "the full snapshot truncated the journal";
  SearcherJournalService restarted(store_.get());
  EXPECT_EQ(Restored(restarted), Live(trials));
}

// Another process's write transaction on the same database, held until Release: the journal's
// writer blocks on it (the store waits up to 10 s for a busy database).
class HeldWriteLock {
 public:
  explicit HeldWriteLock(const fs::path& db) {
    EXPECT_EQ(sqlite3_open(db.string().c_str(), &db_), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  }
  ~HeldWriteLock() { Release(); }
  void Release() {
    if (db_ == nullptr) return;
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db_);
    db_ = nullptr;
  }

 private:
  sqlite3* db_ = nullptr;
};

TEST_F(SearcherJournalServiceTest, PersistQueuesWithoutWaitingAndTheWriterKeepsTheOrder) {
  SearcherJournalService journal(store_.get());
  SearcherHeader header;
  header.initialized = true;
  std::vector<std::pair<std::string, SearcherTrialState>> trials;
  HeldWriteLock held(dir_ / "determined.db");
  // The database is locked, yet every Persist returns: they only queue. First a full snapshot,
  // then one record per created trial.
  ASSERT_TRUE(journal.Persist(exp_id_, *searcher_, header, Views(trials)).ok());
  for (const auto& a : searcher_->InitialOperations()) {
    const auto& c = std::get<searcher::CreateAction>(a);
    trials.emplace_back(c.request_id, SearcherTrialState{});
    for (const auto& v : searcher_->TrialCreated(c.request_id)) {
      trials.back().second.ops.push_back(std::get<searcher::ValidateAfterAction>(v).length);
    }
    ASSERT_TRUE(journal.Persist(exp_id_, *searcher_, header, Views(trials)).ok());
  }
  auto text = store_->GetExperimentSnapshotText(exp_id_);
  ASSERT_TRUE(text.ok());
  EXPECT_FALSE(json::parse(*text).contains("searcher")) << "stored while the database was locked";
  EXPECT_EQ(JournalRows(), 0u);

  held.Release();
  ASSERT_TRUE(journal.Flush().ok());
  EXPECT_EQ(JournalRows(), 3u) << "the records follow the full snapshot, which truncates";
  SearcherJournalService after_restart(store_.get());
  EXPECT_EQ(Restored(after_restart), Live(trials));
}

// A full snapshot holds the state at Persist: the writer serializes a copy of the searcher, so
// what it decides after Persist returned, before the writer got to the write, is not in it.
TEST_F(SearcherJournalServiceTest, AFullSnapshotHoldsTheStateAtPersistNotLater) {
  SearcherJournalService journal(store_.get());
  // The writer is held on a write queued first (its rows are made on the writer's thread).
  std::promise<void> go;
  std::shared_future<void> gate = go.get_future().share();
  journal.QueueTaskLogs([gate] {
    gate.wait();
    return std::vector<store::TaskLogRow>{};
  });
  SearcherHeader header;
  header.initialized = true;
  std::vector<std::pair<std::string, SearcherTrialState>> trials;
  std::vector<searcher::Action> created = searcher_->InitialOperations();
  ASSERT_TRUE(journal.Persist(exp_id_, *searcher_, header, Views(trials)).ok());  // the first: full
  std::string at_persist = searcher_->Snapshot().dump();
  for (const auto& a : created) {
    searcher_->TrialCreated(std::get<searcher::CreateAction>(a).request_id);
  }
  ASSERT_NE(searcher_->Snapshot().dump(), at_persist);
  go.set_value();
  ASSERT_TRUE(journal.Flush().ok());
  auto text = store_->GetExperimentSnapshotText(exp_id_);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(json::parse(*text)["searcher"].dump(), at_persist);
}

TEST_F(SearcherJournalServiceTest, AwaitScopeWaitsForTheWritesItsThreadQueued) {
  SearcherJournalService journal(store_.get());
  SearcherHeader header;
  header.initialized = true;
  std::vector<std::pair<std::string, SearcherTrialState>> trials;
  {
    SearcherJournalService::AwaitScope stored(&journal);
    ASSERT_TRUE(journal.Persist(exp_id_, *searcher_, header, Views(trials)).ok());
  }
  // No Flush: the scope's end waited for the write.
  auto text = store_->GetExperimentSnapshotText(exp_id_);
  ASSERT_TRUE(text.ok());
  EXPECT_TRUE(json::parse(*text).contains("searcher")) << *text;
}

// The runtime loop's form of AwaitScope: a callback once the writes are stored, not before.
TEST_F(SearcherJournalServiceTest, WhenWrittenCallsBackOnceTheWritesAreStored) {
  SearcherJournalService journal(store_.get());
  SearcherHeader header;
  header.initialized = true;
  std::vector<std::pair<std::string, SearcherTrialState>> trials;
  HeldWriteLock held(dir_ / "determined.db");
  uint64_t before = journal.ThreadTicket();
  ASSERT_TRUE(journal.Persist(exp_id_, *searcher_, header, Views(trials)).ok());
  uint64_t after = journal.ThreadTicket();
  ASSERT_GT(after, before);
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Status> answer;
  journal.WhenWritten(before, after, [&](Status st) {
    std::lock_guard<std::mutex> l(mu);
    answer = st;
    cv.notify_all();
  });
  {
    std::lock_guard<std::mutex> l(mu);
    EXPECT_FALSE(answer.has_value()) << "answered while the database was locked";
  }
  held.Release();
  std::unique_lock<std::mutex> l(mu);
  ASSERT_TRUE(cv.wait_for(l, std::chrono::seconds(30), [&] { return answer.has_value(); }));
  EXPECT_TRUE(answer->ok()) << answer->ToString();
  auto text = store_->GetExperimentSnapshotText(exp_id_);
  ASSERT_TRUE(text.ok());
  EXPECT_TRUE(json::parse(*text).contains("searcher")) << *text;
  // Nothing left to wait for: answered at once, on this thread.
  bool at_once = false;
  journal.WhenWritten(before, after, [&](Status st) { at_once = st.ok(); });
  EXPECT_TRUE(at_once);
}

TEST_F(SearcherJournalServiceTest, ANotAwaitedWriteAndLogLinesDoNotHoldTheScope) {
  SearcherJournalService journal(store_.get());
  SearcherHeader header;
  header.initialized = true;
  std::vector<std::pair<std::string, SearcherTrialState>> trials;
  HeldWriteLock held(dir_ / "determined.db");
  {
    SearcherJournalService::AwaitScope stored(&journal);
    ASSERT_TRUE(journal
                    .Persist(exp_id_, *searcher_, header, Views(trials),
                             SearcherJournalService::Wait::kNotAwaited)
                    .ok());
    store::TaskLogRow line;
    line.task_id = "t";
    line.log = "queued\n";
    journal.QueueTaskLogs({line});
  }  // returns although the database is locked: nothing in the scope is awaited
  held.Release();
  ASSERT_TRUE(journal.Flush().ok());
  auto text = store_->GetExperimentSnapshotText(exp_id_);
  ASSERT_TRUE(text.ok());
  EXPECT_TRUE(json::parse(*text).contains("searcher")) << *text;
  auto logs = store_->ListTaskLogsByTask("t", 0, 10, false);
  ASSERT_TRUE(logs.ok()) << logs.status().ToString();
  ASSERT_EQ(logs->size(), 1u);
  EXPECT_EQ(logs->front().log, "queued\n");
}

TEST(SearcherTrialsTextTest, IsWhatDumpWrites) {
  std::vector<std::pair<std::string, SearcherTrialState>> trials;
  EXPECT_EQ(SearcherTrialsText(trials), "{}");
  trials.emplace_back("a-1", SearcherTrialState{});
  trials.emplace_back("b.2", SearcherTrialState{{10, 20}, 5, true, false, true});
  trials.emplace_back("c \"3\"\n", SearcherTrialState{{7}, 0, false, true, false});
  json expected = json::object();
  for (const auto& [rid, t] : trials) expected[rid] = t.ToJson();
  EXPECT_EQ(SearcherTrialsText(trials), expected.dump());
}

TEST_F(SearcherJournalServiceTest, StopStoresWhatIsQueuedAndLaterPersistsWriteAtOnce) {
  SearcherJournalService journal(store_.get());
  SearcherHeader header;
  std::vector<std::pair<std::string, SearcherTrialState>> trials;
  ASSERT_TRUE(journal.Persist(exp_id_, *searcher_, header, Views(trials)).ok());
  journal.Stop();
  auto text = store_->GetExperimentSnapshotText(exp_id_);
  ASSERT_TRUE(text.ok());
  EXPECT_TRUE(json::parse(*text).contains("searcher")) << "Stop dropped a queued write";
  header.initialized = true;
  searcher_->InitialOperations();
  ASSERT_TRUE(journal.Persist(exp_id_, *searcher_, header, Views(trials)).ok());
  EXPECT_EQ(JournalRows(), 1u) << "no writer after Stop: Persist stores before returning";
}

// The diff of reported (dirty) trials writes exactly what the diff of every trial writes, over
// random changes with full snapshots in between: one experiment persisted each way.
TEST_F(SearcherJournalServiceTest, IncrementalDiffEqualsTheFullDiffAfterRandomChanges) {
  store::ExperimentRow row;
  row.state = "ACTIVE";
  row.config = cfg_.defaulted;
  row.owner_id = 1;
  row.snapshot = json::object();
  auto other = store_->InsertExperiment(row, "");
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  searcher::JournaledSearcher full_searcher(std::move(searcher::Searcher::Create(cfg_)).value());
  SearcherJournalService::Options options;
  options.min_journal_bytes = 2048;  // full snapshots now and then
  options.verify_dirty = true;
  SearcherJournalService journal(store_.get(), options);
  std::map<std::string, SearcherTrialState> trials;
  std::mt19937 rng(7);
  SearcherHeader header;
  int fulls_seen = 0;
  for (int step = 0; step < 400; ++step) {
    std::set<std::string> dirty;
    int changes = static_cast<int>(rng() % 4);
    for (int c = 0; c < changes; ++c) {
      std::string rid = "r" + std::to_string(rng() % 40);
      SearcherTrialState& t = trials[rid];  // new trials too
      switch (rng() % 6) {
        case 0:
          t.ops.push_back(rng() % 1000);
          break;
        case 1:
          if (!t.ops.empty()) t.ops.erase(t.ops.begin());
          break;
        case 2:
          t.completed_op = rng() % 1000;
          break;
        case 3:
          t.closed = !t.closed;
          break;
        case 4:
          t.exited_early = !t.exited_early;
          break;
        default:
          t.searcher_exited = !t.searcher_exited;
          break;
      }
      dirty.insert(rid);
    }
    if (rng() % 50 == 0) header.initialized = !header.initialized;
    SearcherJournalService::Trials every, changed;
    for (const auto& [rid, t] : trials) every.emplace_back(rid, t);
    for (const std::string& rid : dirty) changed.emplace_back(rid, trials.at(rid));
    ASSERT_TRUE(
        journal.PersistChanged(exp_id_, *searcher_, header, changed, [&every] { return every; })
            .ok());
    ASSERT_TRUE(journal.Persist(*other, full_searcher, header, every).ok());
    ASSERT_TRUE(journal.Flush().ok());
    auto a = store_->ListSearcherEvents(exp_id_);
    auto b = store_->ListSearcherEvents(*other);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ(*a, *b) << "step " << step;
    auto sa = store_->GetExperimentSnapshotText(exp_id_);
    auto sb = store_->GetExperimentSnapshotText(*other);
    ASSERT_TRUE(sa.ok() && sb.ok());
    ASSERT_EQ(*sa, *sb) << "step " << step;
    if (a->empty()) ++fulls_seen;
  }
  EXPECT_GT(journal.stats().full_snapshots, 4);  // both paths went through full snapshots
  EXPECT_GT(journal.stats().records, 100);
  EXPECT_GT(fulls_seen, 0);
}

// verify_dirty: a change the caller did not report fails the call, and the next call (which
// has no mirror left) stores a full snapshot with the change.
TEST_F(SearcherJournalServiceTest, VerifyDirtyFailsOnAnUnreportedChange) {
  SearcherJournalService::Options options;
  options.verify_dirty = true;
  SearcherJournalService journal(store_.get(), options);
  std::vector<std::pair<std::string, SearcherTrialState>> trials = {{"a", {}}, {"b", {}}};
  SearcherHeader header;
  ASSERT_TRUE(PersistNow(journal, header, trials).ok());
  trials[1].second.ops.push_back(5);  // changed, not reported
  auto every = [&trials] { return Views(trials); };
  Status st = journal.PersistChanged(exp_id_, *searcher_, header, {}, every);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.ToString().find("not reported (e.g. 'b')"), std::string::npos) << st.ToString();
  int64_t fulls = journal.stats().full_snapshots;
  ASSERT_TRUE(journal.PersistChanged(exp_id_, *searcher_, header, {}, every).ok());
  EXPECT_EQ(journal.stats().full_snapshots, fulls + 1);
  ASSERT_TRUE(journal.Flush().ok());
  auto text = store_->GetExperimentSnapshotText(exp_id_);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(json::parse(*text)["trials"]["b"]["ops"], json::array({5}));
}

}  // namespace
}  // namespace det::master::server
