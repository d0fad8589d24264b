#pragma once
// RuntimeLoop: the one thread on which the master's runtime decides. The experiments-and-trials
// service and the allocations service keep their live state on it (ON_RUNTIME); a request hands
// it a task and is answered from there, so no request thread waits on a lock while a decision
// writes to the store, and reads of stored rows never wait for it at all.
//
//  - Post runs a task on the loop; Decide runs a decision and answers once the searcher state
//    it queued is stored (SearcherJournalService); DecideAndWait / Read are their synchronous
//    forms for callers that have a thread to spare (tests, start-up, streams).
//  - Between batches of tasks the loop runs one scheduling pass if any task asked for one
//    (RequestPass, cheap from any thread), never one per queued trial, and the tick every
//    tick_interval.
//  - Before Start and after Stop there is no thread: tasks run at once on the caller's thread
//    (restore at start-up; long polls answered while the master shuts down).
//
// The runtime's state is guarded by a role, not a lock (clang's -Wthread-safety checks it):
// `runtime_role` is held only by code running on the loop (or inline as above), and a loop's own
// mutex makes those runs exclusive.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <thread>

#include "common/status.h"
#include "common/thread_annotations.h"

namespace det::master::server {

class SearcherJournalService;

// The capability "running on the runtime loop". Zero-cost: it only carries the annotations.
class CAPABILITY("runtime loop") RuntimeRole {
 public:
  void Enter() ACQUIRE() {}
  void Leave() RELEASE() {}
  // For a function that runs on the loop but is called through std::function (not checked).
  void Assume() const ASSERT_CAPABILITY(this) {}
};
extern RuntimeRole runtime_role;

#define ON_RUNTIME REQUIRES(::det::master::server::runtime_role)
#define OFF_RUNTIME EXCLUDES(::det::master::server::runtime_role)

// The answer of an asynchronous call: called exactly once, possibly on another thread.
template <typename T>
using Done = std::function<void(T)>;

class RuntimeLoop {
 public:
  struct Hooks {
    std::function<void()> pass;  // one scheduling pass (on the loop)
    std::function<void()> tick;  // the periodic checks (on the loop)
  };

  // `journal` (may be null) is where Decide waits for the searcher state a decision queued.
  RuntimeLoop(std::chrono::milliseconds tick_interval, SearcherJournalService* journal);
  ~RuntimeLoop();
  RuntimeLoop(const RuntimeLoop&) = delete;
  RuntimeLoop& operator=(const RuntimeLoop&) = delete;

  void SetHooks(Hooks hooks) { hooks_ = std::move(hooks); }
  // Starts the thread; a pass asked for before runs first.
  void Start() EXCLUDES(mu_);
  // Long polls answer at once from now on (draining()); the loop keeps working.
  void BeginShutdown() EXCLUDES(mu_);
  // Runs the tasks already queued, then joins the thread; later tasks run inline.
  void Stop() EXCLUDES(mu_);
  bool draining() const EXCLUDES(mu_);
  bool stopped() const EXCLUDES(mu_);

  // Runs `task` on the loop (or inline when it has no thread). Returns at once.
  void Post(std::function<void()> task) EXCLUDES(mu_);

  // Runs `decide` on the loop; `done` gets its outcome once the searcher state it queued is
  // stored (at once when it queued none), or the journal's error.
  void Decide(std::function<Status()> decide, Done<Status> done) EXCLUDES(mu_);
  template <typename T>
  void Decide(std::function<Result<T>()> decide, Done<Result<T>> done) EXCLUDES(mu_) {
    auto out = std::make_shared<std::optional<Result<T>>>();
    Decide(
        [decide = std::move(decide), out]() -> Status {
          out->emplace(decide());
          return (*out)->status();
        },
        [out, done = std::move(done)](Status st) {
          // A decision that threw left no result: the refusal Decide made of it is the answer.
          if (!out->has_value()) {
            return done(Result<T>(st.ok() ? Internal("the decision gave no answer") : st));
          }
          if (!st.ok() && (*out)->ok()) return done(Result<T>(st));  // the journal's error
          done(std::move(**out));
        });
  }
  // Waits for Decide's answer (inline when called on the loop).
  Status DecideAndWait(std::function<Status()> decide) EXCLUDES(mu_);
  template <typename T>
  Result<T> DecideAndWait(std::function<Result<T>()> decide) EXCLUDES(mu_) {
    if (OnLoop()) return decide();
    std::promise<Result<T>> p;
    Decide<T>(std::move(decide), [&p](Result<T> r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }
  // Runs `read` on the loop and waits for it (a listing of the live runtime).
  template <typename T>
  T Read(std::function<T()> read) EXCLUDES(mu_) {
    if (OnLoop()) return read();
    std::promise<T> p;
    Post([&p, &read] { p.set_value(read()); });
    return p.get_future().get();
  }

  // Asks for a scheduling pass after the current batch; any thread, any lock held.
  void RequestPass() EXCLUDES(mu_);
  // The caller (on the loop) just ran a pass itself: requests made so far need no other.
  void PassServed() EXCLUDES(mu_);

  // Without a thread (a test driving the runtime on its own thread): runs the pass asked for
  // since the last one, if any, here and now; true when it ran.
  bool RunRequestedPass() EXCLUDES(mu_);

  // True on the loop's thread, and on a thread running a task inline.
  bool OnLoop() const;

 private:
  void Run() EXCLUDES(mu_);
  // Runs one task with the role held, under exec_mu_ (exclusive with inline runs).
  void Execute(const std::function<void()>& task) EXCLUDES(mu_);

  const std::chrono::milliseconds tick_interval_;
  SearcherJournalService* const journal_;
  Hooks hooks_;
  mutable Mutex mu_;                // the queue and flags
  std::condition_variable_any cv_;  // a task, a pass asked for, or Stop
  std::deque<std::function<void()>> tasks_ GUARDED_BY(mu_);
  bool pass_requested_ GUARDED_BY(mu_) = false;
  bool running_ GUARDED_BY(mu_) = false;  // the thread runs tasks
  bool stopping_ GUARDED_BY(mu_) = false;
  bool draining_ GUARDED_BY(mu_) = false;
  std::recursive_mutex exec_mu_;  // held while a task runs (loop or inline); re-entrant inline
  std::thread thread_;
};

}  // namespace det::master::server
