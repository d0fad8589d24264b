#include "master/server/searcher_journal_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <unordered_map>

namespace det::master::server {

namespace {

using nlohmann::json;

// The last ticket each service handed to this thread, by service instance (AwaitScope).
thread_local std::unordered_map<uint64_t, uint64_t> t_last_ticket;
std::atomic<uint64_t> next_instance{1};
constexpr size_t kFailuresKept = 256;

json HeaderJson(const SearcherHeader& h) {
  json j = {{"initialized", h.initialized}};
  j["shutdown"] = h.shutdown
                      ? json{{"cancel", h.shutdown->cancel}, {"failure", h.shutdown->failure}}
                      : json(nullptr);
  j["queue_position"] = h.queue_position ? json(*h.queue_position) : json(nullptr);
  return j;
}

// Sets the snapshot's header fields as the full snapshot writes them (absent when unset).
void ApplyHeader(const json& h, json* snapshot) {
  (*snapshot)["initialized"] = h.value("initialized", false);
  if (h.contains("shutdown") && !h["shutdown"].is_null()) {
    (*snapshot)["shutdown"] = h["shutdown"];
  } else {
    snapshot->erase("shutdown");
  }
  if (h.contains("queue_position") && !h["queue_position"].is_null()) {
    (*snapshot)["queue_position"] = h["queue_position"];
  } else {
    snapshot->erase("queue_position");
  }
}

SearcherHeader HeaderFromSnapshot(const json& snap) {
  SearcherHeader h;
  h.initialized = snap.value("initialized", false);
  if (snap.contains("shutdown") && snap["shutdown"].is_object()) {
    h.shutdown = searcher::ShutdownAction{snap["shutdown"].value("cancel", false),
                                          snap["shutdown"].value("failure", false)};
  }
  if (snap.contains("queue_position") && snap["queue_position"].is_string()) {
    h.queue_position = snap["queue_position"].get<std::string>();
  }
  return h;
}

// A JSON string literal of `s` (request ids are plain, but nothing assumes it).
void AppendJsonString(std::string_view s, std::string* out) {
  bool plain = std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
  if (!plain) {
    *out += json(std::string(s)).dump();
    return;
  }
  *out += '"';
  *out += s;
  *out += '"';
}

// `"rid":{...}`: one trial as SearcherTrialState::ToJson writes it, without building the JSON
// (a decision can change 20,000 trials at once).
void AppendTrialText(std::string_view rid, const SearcherTrialState& t, std::string* out) {
  AppendJsonString(rid, out);
  *out += ":{\"closed\":";
  *out += t.closed ? "true" : "false";
  *out += ",\"completed_op\":";
  *out += std::to_string(t.completed_op);
  *out += ",\"exited_early\":";
  *out += t.exited_early ? "true" : "false";
  *out += ",\"ops\":[";
  for (size_t i = 0; i < t.ops.size(); ++i) {
    if (i > 0) *out += ',';
    *out += std::to_string(t.ops[i]);
  }
  *out += "],\"searcher_exited\":";
  *out += t.searcher_exited ? "true" : "false";
  *out += '}';
}

}  // namespace

std::string SearcherTrialsText(
    const std::vector<std::pair<std::string, SearcherTrialState>>& trials) {
  std::string out;
  out.reserve(trials.size() * 160 + 2);
  out += '{';
  for (const auto& [rid, t] : trials) {
    if (out.size() > 1) out += ',';
    AppendTrialText(rid, t, &out);
  }
  out += '}';
  return out;
}

bool SearcherHeader::operator==(const SearcherHeader& o) const {
  bool same_shutdown = shutdown.has_value() == o.shutdown.has_value() &&
                       (!shutdown || (shutdown->cancel == o.shutdown->cancel &&
                                      shutdown->failure == o.shutdown->failure));
  return initialized == o.initialized && same_shutdown && queue_position == o.queue_position;
}

SearcherJournalService::SearcherJournalService(store::Store* store, Options options)
    : store_(store), options_(options), instance_(next_instance++) {
  MutexLock lock(&mu_);
  writer_running_ = true;
  writer_ = std::thread([this] { WriterLoop(); });
}

SearcherJournalService::~SearcherJournalService() {
  Stop();
  t_last_ticket.erase(instance_);
}

SearcherJournalService::AwaitScope::AwaitScope(SearcherJournalService* journal)
    : journal_(journal), before_(t_last_ticket[journal->instance_]) {}

SearcherJournalService::AwaitScope::~AwaitScope() {
  uint64_t last = t_last_ticket[journal_->instance_];
  if (last == before_) return;  // this scope queued nothing
  Status st = journal_->AwaitWritten(before_, last);
  if (!st.ok()) {
    spdlog::error("searcher state not stored (the next decision writes a full snapshot): {}",
                  st.ToString());
  }
}

void SearcherJournalService::Queue(Write w, Wait wait) {
  w.ticket = ++queued_;
  if (wait == Wait::kAwaited) t_last_ticket[instance_] = w.ticket;
  queue_.push_back(std::move(w));
  work_cv_.notify_one();
}

void SearcherJournalService::QueueTaskLogs(std::vector<store::TaskLogRow> rows) {
  if (rows.empty()) return;
  QueueTaskLogs([rows = std::move(rows)]() mutable { return std::move(rows); });
}

void SearcherJournalService::QueueTaskLogs(std::function<std::vector<store::TaskLogRow>()> make) {
  MutexLock lock(&mu_);
  Write w;
  w.logs = std::move(make);
  if (!writer_running_) {
    // After Stop: stored here (a master that stops no longer answers).
    if (Status st = store_->AddTaskLogs(w.logs()); !st.ok()) {
      spdlog::warn("cannot store master log lines: {}", st.ToString());
    }
    return;
  }
  Queue(std::move(w), Wait::kNotAwaited);
}

bool SearcherJournalService::DefaultVerifyDirty() {
#ifndef NDEBUG
  return true;
#else
  const char* v = std::getenv("DET_VERIFY_SEARCHER_DIRTY");
  return v != nullptr && std::string_view(v) == "1";
#endif
}

Status SearcherJournalService::QueueFull(int64_t experiment_id,
                                         searcher::JournaledSearcher& searcher,
                                         const SearcherHeader& header, Persisted& state,
                                         Wait wait) {
  Write w;
  w.trials.reserve(state.trials.size());
  for (const auto& [rid, t] : state.trials) w.trials.emplace_back(rid, t);
  json snap = json::object();
  ApplyHeader(HeaderJson(header), &snap);
  w.searcher = searcher.CloneState();  // snapshotted by the writer
  searcher.TakeEvents();               // the snapshot holds their effect
  w.experiment_id = experiment_id;
  w.full = true;
  w.snapshot = std::move(snap);
  Queue(std::move(w), wait);
  // The size is known once the writer has serialized it (Stored). Until then, at least the
  // journal it replaces: a writer that lags must not make the next full snapshots come sooner.
  state.full_bytes = std::max(state.full_bytes, state.journal_bytes);
  state.next_seq = 0;
  state.journal_bytes = 0;
  state.header = header;
  stats_.full_snapshots++;
  return Status::Ok();
}

Status SearcherJournalService::StoreWrite(const Write& w, bool skip, int64_t* full_bytes) {
  if (skip) {
    return FailedPrecondition("searcher journal of experiment " + std::to_string(w.experiment_id) +
                              ": an earlier write failed, this record is dropped");
  }
  if (w.logs) return store_->AddTaskLogs(w.logs());
  if (!w.full) return store_->AppendSearcherEvent(w.experiment_id, w.seq, w.record);
  json snap = w.snapshot;
  snap["searcher"] = w.searcher->Snapshot();
  std::string text = snap.dump();
  // The trials go in as the object's last member: text is "{...}" (never empty: "searcher").
  std::string trials = SearcherTrialsText(w.trials);
  text.insert(text.size() - 1, (text.size() > 2 ? ",\"trials\":" : "\"trials\":") + trials);
  *full_bytes = static_cast<int64_t>(text.size());
  return store_->WriteExperimentSnapshotText(w.experiment_id, text);
}

void SearcherJournalService::Stored(const Write& w, const Status& st, int64_t full_bytes) {
  if (w.logs) {
    // Log lines are no part of the searcher state: nothing to repair.
    if (!st.ok()) spdlog::warn("cannot store master log lines: {}", st.ToString());
  } else if (st.ok()) {
    if (w.full) {
      broken_.erase(w.experiment_id);
      stats_.full_bytes += full_bytes;
      auto it = experiments_.find(w.experiment_id);
      if (it != experiments_.end()) it->second.full_bytes = full_bytes;
    }
  } else {
    // The events this write held exist nowhere else: only a full snapshot can hold them now.
    broken_.insert(w.experiment_id);
    experiments_.erase(w.experiment_id);
    failures_.emplace_back(w.ticket, st);
    if (failures_.size() > kFailuresKept) failures_.pop_front();
  }
  written_ = w.ticket;
  done_cv_.notify_all();
}

void SearcherJournalService::WriterLoop() {
  MutexLock lock(&mu_);
  for (;;) {
    while (queue_.empty() && !stopping_) work_cv_.wait(mu_);
    if (queue_.empty()) break;  // stopping, everything written
    Write w = std::move(queue_.front());
    queue_.pop_front();
    bool skip = !w.full && !w.logs && broken_.count(w.experiment_id) > 0;
    lock.Unlock();
    int64_t full_bytes = 0;
    Status st = StoreWrite(w, skip, &full_bytes);
    lock.Lock();
    Stored(w, st, full_bytes);
    std::vector<std::function<void()>> ready = TakeReadyLocked();
    if (!ready.empty()) {
      lock.Unlock();  // the callbacks answer requests: never under this lock
      for (auto& r : ready) r();
      lock.Lock();
    }
  }
  writer_running_ = false;
  done_cv_.notify_all();
}

Status SearcherJournalService::FailureBetween(uint64_t after, uint64_t upto) const {
  for (const auto& [ticket, st] : failures_) {
    if (ticket > after && ticket <= upto) return st;
  }
  return Status::Ok();
}

Status SearcherJournalService::AwaitWritten(uint64_t after, uint64_t upto) {
  MutexLock lock(&mu_);
  while (written_ < upto) done_cv_.wait(mu_);
  return FailureBetween(after, upto);
}

uint64_t SearcherJournalService::ThreadTicket() const {
  auto it = t_last_ticket.find(instance_);
  return it == t_last_ticket.end() ? 0 : it->second;
}

void SearcherJournalService::WhenWritten(uint64_t after, uint64_t upto,
                                         std::function<void(Status)> done) {
  Status st;
  {
    MutexLock lock(&mu_);
    if (written_ < upto) {
      when_written_.emplace(upto, Pending{after, std::move(done)});
      return;
    }
    st = FailureBetween(after, upto);
  }
  done(st);
}

std::vector<std::function<void()>> SearcherJournalService::TakeReadyLocked() {
  std::vector<std::function<void()>> ready;
  while (!when_written_.empty() && when_written_.begin()->first <= written_) {
    auto node = when_written_.extract(when_written_.begin());
    Status st = FailureBetween(node.mapped().after, node.key());
    ready.push_back([done = std::move(node.mapped().done), st] { done(st); });
  }
  return ready;
}

Status SearcherJournalService::Flush() {
  uint64_t after, upto;
  {
    MutexLock lock(&mu_);
    after = flushed_;
    upto = queued_;
  }
  Status st = AwaitWritten(after, upto);
  MutexLock lock(&mu_);
  flushed_ = std::max(flushed_, upto);
  return st;
}

void SearcherJournalService::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    work_cv_.notify_all();
  }
  if (writer_.joinable()) writer_.join();
}

Status SearcherJournalService::Persist(int64_t experiment_id, searcher::JournaledSearcher& searcher,
                                       const SearcherHeader& header, Trials trials, Wait wait) {
  // Every trial is "changed": the diff against the mirror finds the ones that are.
  Trials all = trials;
  return PersistChanged(
      experiment_id, searcher, header, std::move(trials), [&all] { return all; }, wait);
}

Status SearcherJournalService::PersistChanged(int64_t experiment_id,
                                              searcher::JournaledSearcher& searcher,
                                              const SearcherHeader& header, Trials changed_trials,
                                              const std::function<Trials()>& all, Wait wait) {
  MutexLock lock(&mu_);
  // After Stop there is no writer: the writes queued here are stored before returning.
  struct DrainIfStopped {
    SearcherJournalService* self;
    ~DrainIfStopped() NO_THREAD_SAFETY_ANALYSIS {
      if (self->writer_running_) return;
      while (!self->queue_.empty()) {
        Write w = std::move(self->queue_.front());
        self->queue_.pop_front();
        int64_t full_bytes = 0;
        bool skip = !w.full && !w.logs && self->broken_.count(w.experiment_id) > 0;
        Status st = self->StoreWrite(w, skip, &full_bytes);
        self->Stored(w, st, full_bytes);
      }
    }
  } drain{this};
  auto it = experiments_.find(experiment_id);
  if (it == experiments_.end()) {
    Persisted fresh;
    for (auto& [rid, t] : all()) fresh.trials.insert_or_assign(std::string(rid), std::move(t));
    Status st = QueueFull(experiment_id, searcher, header, fresh, wait);
    if (st.ok()) experiments_.emplace(experiment_id, std::move(fresh));
    return st;
  }
  Persisted& state = it->second;
  // Only the reported trials: the ones that are new or differ from the mirror, which takes
  // their new state at once (it is what this call persists, as a record or a full snapshot).
  // The record, written as text in one buffer: {"tr":{changed trials},"h":header,"ev":[events]}.
  std::string text = "{\"tr\":{";
  text.reserve(64 + changed_trials.size() * 112);
  size_t changed = 0;
  for (auto& [rid, t] : changed_trials) {
    auto known = state.trials.find(rid);
    if (known != state.trials.end() && known->second == t) continue;
    if (changed++ > 0) text += ',';
    AppendTrialText(rid, t, &text);
    if (known == state.trials.end()) {
      state.trials.emplace(std::string(rid), std::move(t));
    } else {
      known->second = std::move(t);
    }
  }
  if (options_.verify_dirty) {
    // The full diff: every trial must equal the mirror, else a write was not reported.
    Trials every = all();
    std::string missed;
    size_t count = 0;
    for (const auto& [rid, t] : every) {
      auto known = state.trials.find(rid);
      if (known == state.trials.end() || !(known->second == t)) {
        missed = std::string(rid);
        ++count;
      }
    }
    if (count > 0 || every.size() != state.trials.size()) {
      experiments_.erase(it);  // the next call writes a full snapshot from every trial
      return Internal("searcher journal of experiment " + std::to_string(experiment_id) + ": " +
                      std::to_string(count) + " changed trial(s) not reported (e.g. '" + missed +
                      "'); " + std::to_string(every.size()) + " trials, mirror " +
                      std::to_string(state.trials.size()));
    }
  }
  if (!searcher.HasEvents() && changed == 0 && header == state.header) return Status::Ok();
  text += "},\"h\":";
  text += HeaderJson(header).dump();
  text += ",\"ev\":[";
  bool first = true;
  for (const json& e : searcher.TakeEvents()) {
    if (!first) text += ',';
    first = false;
    text += e.dump();
  }
  text += "]}";
  auto bytes = static_cast<int64_t>(text.size());
  if (state.journal_bytes + bytes > std::max(state.full_bytes, options_.min_journal_bytes)) {
    return QueueFull(experiment_id, searcher, header, state, wait);
  }
  Write w;
  w.experiment_id = experiment_id;
  w.seq = state.next_seq;
  w.record = std::move(text);
  Queue(std::move(w), wait);
  state.next_seq++;
  state.journal_bytes += bytes;
  state.header = header;
  stats_.records++;
  stats_.record_bytes += bytes;
  return Status::Ok();
}

Result<SearcherJournalService::Loaded> SearcherJournalService::Load(
    int64_t experiment_id, const nlohmann::json& stored_snapshot) {
  DET_ASSIGN_OR_RETURN(auto rows, store_->ListSearcherEvents(experiment_id));
  Loaded loaded;
  loaded.snapshot = stored_snapshot.is_object() ? stored_snapshot : json::object();
  if (!loaded.snapshot.contains("trials") || !loaded.snapshot["trials"].is_object()) {
    loaded.snapshot["trials"] = json::object();
  }
  Persisted state;
  state.full_bytes = static_cast<int64_t>(loaded.snapshot.dump().size());
  for (const auto& [seq, text] : rows) {
    json record = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded() || !record.is_object()) {
      return InvalidArgument("searcher journal of experiment " + std::to_string(experiment_id) +
                             ": record " + std::to_string(seq) + " is not a JSON object");
    }
    auto ev = record.find("ev");
    if (ev != record.end() && ev->is_array()) {
      for (const json& e : *ev) loaded.events.push_back(e);
    }
    auto tr = record.find("tr");
    if (tr != record.end() && tr->is_object()) {
      for (auto t = tr->begin(); t != tr->end(); ++t) loaded.snapshot["trials"][t.key()] = *t;
    }
    auto h = record.find("h");
    if (h != record.end() && h->is_object()) ApplyHeader(*h, &loaded.snapshot);
    state.next_seq = seq + 1;
    state.journal_bytes += static_cast<int64_t>(text.size());
    loaded.records++;
  }
  state.header = HeaderFromSnapshot(loaded.snapshot);
  const json& merged = loaded.snapshot["trials"];  // a JSON object iterates by ascending key
  for (auto t = merged.begin(); t != merged.end(); ++t) {
    state.trials.emplace(t.key(), SearcherTrialState::FromJson(*t));
  }
  MutexLock lock(&mu_);
  experiments_[experiment_id] = std::move(state);
  return loaded;
}

void SearcherJournalService::Forget(int64_t experiment_id) {
  MutexLock lock(&mu_);
  experiments_.erase(experiment_id);
}

SearcherJournalService::Stats SearcherJournalService::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace det::master::server
