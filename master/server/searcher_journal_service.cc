#include "master/server/searcher_journal_service.h"

#include <algorithm>

namespace det::master::server {

namespace {

using nlohmann::json;

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

}  // namespace

json SearcherTrialState::ToJson() const {
  return {{"ops", ops},
          {"completed_op", completed_op},
          {"closed", closed},
          {"exited_early", exited_early},
          {"searcher_exited", searcher_exited}};
}

SearcherTrialState SearcherTrialState::FromJson(const json& j) {
  SearcherTrialState t;
  auto ops = j.find("ops");
  if (ops != j.end() && ops->is_array()) {
    for (const json& op : *ops) t.ops.push_back(op.get<uint64_t>());
  }
  t.completed_op = j.value("completed_op", uint64_t{0});
  t.closed = j.value("closed", false);
  t.exited_early = j.value("exited_early", false);
  t.searcher_exited = j.value("searcher_exited", false);
  return t;
}

bool SearcherHeader::operator==(const SearcherHeader& o) const {
  bool same_shutdown = shutdown.has_value() == o.shutdown.has_value() &&
                       (!shutdown || (shutdown->cancel == o.shutdown->cancel &&
                                      shutdown->failure == o.shutdown->failure));
  return initialized == o.initialized && same_shutdown && queue_position == o.queue_position;
}

Status SearcherJournalService::WriteFull(int64_t experiment_id,
                                         searcher::JournaledSearcher& searcher,
                                         const SearcherHeader& header, const Trials& trials,
                                         Persisted& state) {
  json trial_snaps = json::object();
  for (const auto& [rid, t] : trials) trial_snaps[std::string(rid)] = t.ToJson();
  json snap = {{"searcher", searcher.Snapshot()}, {"trials", std::move(trial_snaps)}};
  ApplyHeader(HeaderJson(header), &snap);
  searcher.TakeEvents();  // the snapshot holds their effect
  std::string text = snap.dump();
  DET_RETURN_IF_ERROR(store_->UpdateExperimentSnapshot(experiment_id, snap));
  state.next_seq = 0;
  state.journal_bytes = 0;
  state.full_bytes = static_cast<int64_t>(text.size());
  state.header = header;
  state.trials.clear();
  state.trials.reserve(trials.size());
  for (const auto& [rid, t] : trials) state.trials.emplace_back(std::string(rid), t);
  stats_.full_snapshots++;
  stats_.full_bytes += state.full_bytes;
  return Status::Ok();
}

Status SearcherJournalService::Persist(int64_t experiment_id, searcher::JournaledSearcher& searcher,
                                       const SearcherHeader& header, Trials trials) {
  auto by_id = [](const auto& a, const auto& b) { return a.first < b.first; };
  if (!std::is_sorted(trials.begin(), trials.end(), by_id)) {
    std::sort(trials.begin(), trials.end(), by_id);
  }
  MutexLock lock(&mu_);
  auto it = experiments_.find(experiment_id);
  if (it == experiments_.end()) {
    Persisted fresh;
    Status st = WriteFull(experiment_id, searcher, header, trials, fresh);
    if (st.ok()) experiments_.emplace(experiment_id, std::move(fresh));
    return st;
  }
  Persisted& state = it->second;
  // One merge of the two sorted lists: the trials that are new or differ.
  json changed = json::object();
  bool added = false;
  size_t old = 0;
  for (const auto& [rid, t] : trials) {
    while (old < state.trials.size() && std::string_view(state.trials[old].first) < rid) ++old;
    bool known = old < state.trials.size() && std::string_view(state.trials[old].first) == rid;
    added = added || !known;
    if (!known || !(state.trials[old].second == t)) changed[std::string(rid)] = t.ToJson();
  }
  if (!searcher.HasEvents() && changed.empty() && header == state.header) return Status::Ok();
  json events = json::array();
  for (json& e : searcher.TakeEvents()) events.push_back(std::move(e));
  json record = {{"ev", std::move(events)}, {"tr", std::move(changed)}, {"h", HeaderJson(header)}};
  std::string text = record.dump();
  auto bytes = static_cast<int64_t>(text.size());
  if (state.journal_bytes + bytes > std::max(state.full_bytes, options_.min_journal_bytes)) {
    Status st = WriteFull(experiment_id, searcher, header, trials, state);
    if (!st.ok()) experiments_.erase(it);  // the next call writes a full snapshot again
    return st;
  }
  Status st = store_->AppendSearcherEvent(experiment_id, state.next_seq, text);
  if (!st.ok()) {
    // The events taken are in no record: only a full snapshot can hold them now.
    experiments_.erase(it);
    return st;
  }
  state.next_seq++;
  state.journal_bytes += bytes;
  state.header = header;
  if (added) {
    // New trials: take the whole sorted list (rare next to events that change one trial).
    state.trials.clear();
    state.trials.reserve(trials.size());
    for (auto& [rid, t] : trials) state.trials.emplace_back(std::string(rid), std::move(t));
  } else {
    const json& changed_now = record["tr"];
    size_t at = 0;
    for (auto t = changed_now.begin(); t != changed_now.end(); ++t) {  // ascending ids too
      while (state.trials[at].first != t.key()) ++at;
      state.trials[at].second = SearcherTrialState::FromJson(*t);
    }
  }
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
    state.trials.emplace_back(t.key(), SearcherTrialState::FromJson(*t));
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
