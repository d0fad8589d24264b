#pragma once
// SearcherJournalService: persists each experiment's searcher state (the searcher itself and
// the master's per-trial searcher bookkeeping) as a full snapshot (store table
// experiment_snapshots) plus an append-only journal of small records (searcher_events), instead
// of a full snapshot after every event (3.4 MB at 10,000 adaptive_asha trials).
//
// Rules:
//  1. Persist appends ONE record per call: the searcher events recorded since the last call
//     (JournaledSearcher), the per-trial states that differ from what was last persisted, and
//     the experiment header (initialized, shutdown, queue position). A call that changes
//     nothing writes nothing.
//  2. It writes a full snapshot instead (UpdateExperimentSnapshot, which truncates the journal in
//     the same transaction) when it knows nothing of the experiment yet (first call, or after a
//     failed write: the events it took are only in the full snapshot now), or when the journal
//     would pass max(full snapshot bytes, min_journal_bytes): bytes written per event stay about
//     twice a record's, and a restore replays at most one snapshot's worth of journal.
//  3. Load merges the journal into the stored snapshot: the header and per-trial states are
//     overwritten record by record, the searcher events are returned in order to be replayed
//     (JournaledSearcher::Replay) on the searcher restored from the snapshot's "searcher". Each
//     record is one statement, so a kill -9 at any point leaves a prefix of whole records.
//  4. The per-trial diff compares only the trials the caller says may have changed (the
//     master marks the trials each core::Experiment decision lists as changed,
//     Decision::searcher_changed, ExperimentService::Carry) against a mirror of what is
//     persisted, so a call costs O(changed trials x log n), not O(n). The mirror is always "stored
//     + queued": a full snapshot is built from it. Only when the service knows nothing of the
//     experiment does it ask the caller for every trial. Options::verify_dirty (tests, debug
//     builds) also compares the mirror with every trial after each call and fails on any
//     difference.
//  5. Persist only decides and serializes (under the caller's lock: the searcher and the trials
//     must not change meanwhile); a writer thread stores the writes in the order Persist made
//     them, so a full snapshot of several MB is serialized to text and written while the master
//     serves other requests. A caller that must not answer before its writes are stored waits
//     with AwaitScope (or Flush) after letting go of its own lock. A write that fails makes the
//     writer drop the experiment's records queued after it (their base is gone) and the next
//     Persist write a full snapshot. Stop (or the destructor) writes everything queued.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/status.h"
#include "common/thread_annotations.h"
#include "master/core/trial_searcher.h"
#include "master/searcher/journaled_searcher.h"
#include "master/store/store.h"

namespace det::master::server {

// The master's searcher bookkeeping for one trial (master/core/trial_searcher.h).
using core::SearcherTrialState;

// {"<request id>": SearcherTrialState::ToJson(), ...} as text, as nlohmann's dump() writes it
// (keys in the given order), without building the JSON: a full snapshot's 20,000 trials.
std::string SearcherTrialsText(
    const std::vector<std::pair<std::string, SearcherTrialState>>& trials);

// The experiment-level fields persisted next to the searcher.
struct SearcherHeader {
  bool initialized = false;
  std::optional<searcher::ShutdownAction> shutdown;
  std::optional<std::string> queue_position;

  bool operator==(const SearcherHeader& o) const;
};

class SearcherJournalService {
 public:
  struct Options {
    int64_t min_journal_bytes = 64 * 1024;
    // After each PersistChanged, compare the mirror with every trial (O(n)): a trial whose
    // change was not reported fails the call. On in debug builds and with
    // DET_VERIFY_SEARCHER_DIRTY=1 in the environment (tests).
    bool verify_dirty = DefaultVerifyDirty();
  };
  static bool DefaultVerifyDirty();
  struct Loaded {
    nlohmann::json snapshot;             // the stored snapshot with the journal's changes
    std::vector<nlohmann::json> events;  // to replay on the snapshot's searcher
    int64_t records = 0;
  };
  struct Stats {
    int64_t records = 0, record_bytes = 0, full_snapshots = 0, full_bytes = 0;
  };

  explicit SearcherJournalService(store::Store* store) : SearcherJournalService(store, Options{}) {}
  SearcherJournalService(store::Store* store, Options options);
  ~SearcherJournalService();
  SearcherJournalService(const SearcherJournalService&) = delete;
  SearcherJournalService& operator=(const SearcherJournalService&) = delete;

  // Waits, at the end of its scope, for the writes the calling thread queued during the scope
  // (none: no wait). Declare it before the caller's own lock so it waits after that lock is
  // released: the request answers only once its searcher state is stored.
  class AwaitScope {
   public:
    explicit AwaitScope(SearcherJournalService* journal);
    ~AwaitScope();
    AwaitScope(const AwaitScope&) = delete;
    AwaitScope& operator=(const AwaitScope&) = delete;

   private:
    SearcherJournalService* journal_;
    uint64_t before_;
  };

  // Every trial of an experiment by request id, ascending (as a std::map iterates).
  using Trials = std::vector<std::pair<std::string_view, SearcherTrialState>>;

  // Whether an AwaitScope of the calling thread waits for a write. kNotAwaited is for state the
  // stored rows already imply (a new experiment's first snapshot: a restore replays its
  // creations from the trial rows), so the request that made it answers sooner.
  enum class Wait { kAwaited, kNotAwaited };

  // Persists the experiment's searcher state (rule 1 / 2): decides what to write and queues it
  // for the writer (rule 5). `trials` holds every trial, sorted by request id (it is sorted
  // here when it is not).
  Status Persist(int64_t experiment_id, searcher::JournaledSearcher& searcher,
                 const SearcherHeader& header, Trials trials, Wait wait = Wait::kAwaited)
      EXCLUDES(mu_);
  // The same with only the trials that may have changed since the previous call (new ones
  // included; any order). `all` lists every trial: called when the service has no mirror of
  // the experiment (a full snapshot) and, with verify_dirty, to check the mirror.
  Status PersistChanged(int64_t experiment_id, searcher::JournaledSearcher& searcher,
                        const SearcherHeader& header, Trials changed,
                        const std::function<Trials()>& all, Wait wait = Wait::kAwaited)
      EXCLUDES(mu_);
  // Stores the master's log lines (task_logs) after the writes queued before them, so a large
  // creation answers without writing 20,000 lines first. Not awaited; a failure is logged.
  void QueueTaskLogs(std::vector<store::TaskLogRow> rows) EXCLUDES(mu_);
  // The same with rows that `make` builds on the writer's thread (a large search's 20,000
  // "Scheduling" lines, formatted off the thread that decided).
  void QueueTaskLogs(std::function<std::vector<store::TaskLogRow>()> make) EXCLUDES(mu_);

  // The last awaited ticket the calling thread queued (what an AwaitScope compares), and a
  // callback form of the wait: `done` runs once the writes after `after` up to `upto` are stored
  // (at once when they are), with the first failure among them, on the writer's thread or here.
  uint64_t ThreadTicket() const;
  void WhenWritten(uint64_t after, uint64_t upto, std::function<void(Status)> done) EXCLUDES(mu_);

  // Waits until every write queued so far is stored; the first write that failed since the
  // previous Flush, or OK.
  Status Flush() EXCLUDES(mu_);
  // Writes what is queued and stops the writer; later Persist calls write synchronously.
  void Stop() EXCLUDES(mu_);

  // Reads the experiment's journal and merges it into `stored_snapshot` (rule 3); remembers
  // what is persisted so the next Persist appends to it.
  Result<Loaded> Load(int64_t experiment_id, const nlohmann::json& stored_snapshot) EXCLUDES(mu_);

  // Forgets an experiment (its next Persist writes a full snapshot).
  void Forget(int64_t experiment_id) EXCLUDES(mu_);

  Stats stats() const EXCLUDES(mu_);

 private:
  struct Persisted {
    int64_t next_seq = 0;
    int64_t journal_bytes = 0;
    int64_t full_bytes = 0;
    SearcherHeader header;
    std::map<std::string, SearcherTrialState, std::less<>> trials;  // by request id
  };

  // One write for the writer thread, in Persist order.
  struct Write {
    uint64_t ticket = 0;
    int64_t experiment_id = 0;
    bool full = false;
    // full: the snapshot's header fields, a copy of the searcher's state and the trials, all
    // serialized by the writer (the searcher's JSON and the trials' text are most of a
    // snapshot's cost: 20,000 trials take ~150 ms, off the thread that decided).
    nlohmann::json snapshot;
    std::unique_ptr<searcher::Searcher> searcher;
    std::vector<std::pair<std::string, SearcherTrialState>> trials;
    std::string record;  // a journal record's text
    int64_t seq = 0;
    // QueueTaskLogs: only these, made on the writer's thread.
    std::function<std::vector<store::TaskLogRow>()> logs;
  };

  Status QueueFull(int64_t experiment_id, searcher::JournaledSearcher& searcher,
                   const SearcherHeader& header, Persisted& state, Wait wait) REQUIRES(mu_);
  void Queue(Write w, Wait wait) REQUIRES(mu_);
  // Stores one write (no lock held: it is the I/O); `skip` drops it with an error instead.
  Status StoreWrite(const Write& w, bool skip, int64_t* full_bytes);
  // Records a stored write's outcome (rule 5) and wakes the waiters.
  void Stored(const Write& w, const Status& st, int64_t full_bytes) REQUIRES(mu_);
  void WriterLoop() EXCLUDES(mu_);
  // Waits until the writes up to `upto` are stored; the first that failed after `after`.
  Status AwaitWritten(uint64_t after, uint64_t upto) EXCLUDES(mu_);
  // The first failure among the tickets (after, upto], or OK.
  Status FailureBetween(uint64_t after, uint64_t upto) const REQUIRES(mu_);
  // The WhenWritten callbacks whose writes are now stored, taken off the list.
  std::vector<std::function<void()>> TakeReadyLocked() REQUIRES(mu_);

  store::Store* store_;
  Options options_;
  mutable Mutex mu_;
  std::map<int64_t, Persisted> experiments_ GUARDED_BY(mu_);
  Stats stats_ GUARDED_BY(mu_);
  std::deque<Write> queue_ GUARDED_BY(mu_);
  uint64_t queued_ GUARDED_BY(mu_) = 0;   // tickets handed out
  uint64_t written_ GUARDED_BY(mu_) = 0;  // tickets stored (or failed), in order
  uint64_t flushed_ GUARDED_BY(mu_) = 0;  // Flush reported failures up to here
  // Experiments whose last write failed: their queued records are dropped until a full snapshot.
  std::set<int64_t> broken_ GUARDED_BY(mu_);
  std::deque<std::pair<uint64_t, Status>> failures_ GUARDED_BY(mu_);  // the latest, by ticket
  bool stopping_ GUARDED_BY(mu_) = false;
  bool writer_running_ GUARDED_BY(mu_) = false;
  std::condition_variable_any work_cv_;  // a write queued, or Stop
  std::condition_variable_any done_cv_;  // a write stored
  struct Pending {
    uint64_t after = 0;
    std::function<void(Status)> done;
  };
  std::multimap<uint64_t, Pending> when_written_ GUARDED_BY(mu_);  // by `upto`
  std::thread writer_;
  const uint64_t instance_;  // tells services apart in AwaitScope's per-thread tickets
};

}  // namespace det::master::server
