#include "master/server/runtime_loop.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <utility>

#include "master/server/searcher_journal_service.h"

namespace det::master::server {

RuntimeRole runtime_role;

namespace {

// Set while this thread runs a task of some loop (its thread, or inline).
thread_local int t_on_loop = 0;

}  // namespace

RuntimeLoop::RuntimeLoop(std::chrono::milliseconds tick_interval, SearcherJournalService* journal)
    : tick_interval_(tick_interval), journal_(journal) {}

RuntimeLoop::~RuntimeLoop() { Stop(); }

bool RuntimeLoop::OnLoop() const { return t_on_loop > 0; }

void RuntimeLoop::Start() {
  MutexLock lock(&mu_);
  if (stopping_ || running_) return;
  running_ = true;
  thread_ = std::thread([this] { Run(); });
}

void RuntimeLoop::BeginShutdown() {
  MutexLock lock(&mu_);
  draining_ = true;
}

bool RuntimeLoop::draining() const {
  MutexLock lock(&mu_);
  return draining_ || stopping_;
}

bool RuntimeLoop::stopped() const {
  MutexLock lock(&mu_);
  return stopping_;
}

void RuntimeLoop::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    draining_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void RuntimeLoop::Execute(const std::function<void()>& task) {
  std::lock_guard<std::recursive_mutex> exec(exec_mu_);
  ++t_on_loop;
  runtime_role.Enter();
  try {
    task();
  } catch (const std::exception& e) {
    // A task's own errors are Statuses; this is a bug, and the master keeps serving.
    spdlog::error("runtime loop: a task threw: {}", e.what());
  }
  runtime_role.Leave();
  --t_on_loop;
}

void RuntimeLoop::Post(std::function<void()> task) {
  {
    MutexLock lock(&mu_);
    if (running_) {
      tasks_.push_back(std::move(task));
      cv_.notify_all();
      return;
    }
  }
  Execute(task);  // no thread (before Start, after Stop): here and now
}

void RuntimeLoop::Decide(std::function<Status()> decide, Done<Status> done) {
  Post([this, decide = std::move(decide), done = std::move(done)]() mutable {
    uint64_t before = journal_ ? journal_->ThreadTicket() : 0;
    Status st;
    try {
      st = decide();
    } catch (const nlohmann::json::exception& e) {
      // Input the request's checks let through; the decision is refused, not the master.
      st = InvalidArgument(std::string("malformed request: ") + e.what());
    } catch (const std::exception& e) {
      spdlog::error("runtime loop: a decision threw: {}", e.what());
      st = Internal(std::string("the decision failed: ") + e.what());
    }
    uint64_t after = journal_ ? journal_->ThreadTicket() : 0;
    if (after == before) return done(st);
    // Answered once the searcher state the decision queued is stored (by the journal's writer,
    // which calls back on its thread: the loop goes on meanwhile).
    journal_->WhenWritten(before, after, [st, done = std::move(done)](Status written) {
      if (!written.ok()) {
        spdlog::error("searcher state not stored (the next decision writes a full snapshot): {}",
                      written.ToString());
        return done(st.ok() ? written : st);
      }
      done(st);
    });
  });
}

Status RuntimeLoop::DecideAndWait(std::function<Status()> decide) {
  if (OnLoop()) return decide();
  std::promise<Status> p;
  Decide(std::move(decide), [&p](Status st) { p.set_value(std::move(st)); });
  return p.get_future().get();
}

void RuntimeLoop::RequestPass() {
  MutexLock lock(&mu_);
  if (pass_requested_) return;
  pass_requested_ = true;
  cv_.notify_all();
}

void RuntimeLoop::PassServed() {
  MutexLock lock(&mu_);
  pass_requested_ = false;
}

bool RuntimeLoop::RunRequestedPass() {
  {
    MutexLock lock(&mu_);
    if (running_ || !pass_requested_) return false;
    pass_requested_ = false;
  }
  if (hooks_.pass) Execute(hooks_.pass);
  return true;
}

void RuntimeLoop::Run() {
  MutexLock lock(&mu_);
  auto next_tick = std::chrono::steady_clock::now() + tick_interval_;
  for (;;) {
    if (tasks_.empty() && !pass_requested_ && !stopping_) cv_.wait_until(mu_, next_tick);
    // A batch: every task queued now, then at most one pass and one tick.
    std::deque<std::function<void()>> batch;
    batch.swap(tasks_);
    bool stop = stopping_ && batch.empty();
    bool tick = !stopping_ && std::chrono::steady_clock::now() >= next_tick;
    lock.Unlock();
    for (auto& task : batch) Execute(task);
    lock.Lock();
    if (stop) break;
    bool pass = pass_requested_ && !stopping_;
    pass_requested_ = pass_requested_ && !pass;  // requests made during the pass get the next
    lock.Unlock();
    if (tick && hooks_.tick) Execute(hooks_.tick);
    if (pass && hooks_.pass) Execute(hooks_.pass);
    lock.Lock();
    if (tick) next_tick = std::chrono::steady_clock::now() + tick_interval_;
  }
  running_ = false;
  // Tasks posted between the last batch and running_ = false.
  std::deque<std::function<void()>> rest;
  rest.swap(tasks_);
  lock.Unlock();
  for (auto& task : rest) Execute(task);
  lock.Lock();
}

}  // namespace det::master::server
