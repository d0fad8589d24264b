#include "master/searcher/request_id_index.h"

#include <cstring>

namespace det::master::searcher {

namespace {

uint64_t Mix(uint64_t x) {
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 32;
  return x;
}

}  // namespace

// Eight bytes at a time (a UUID's text is 36), one multiply each; a profile of searcher_bench
// showed std::hash's call at 7% of an event. Only slot positions depend on it; nothing stored
// does.
uint64_t RequestIdIndex::Hash(std::string_view id) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ id.size();
  size_t i = 0;
  for (; i + 8 <= id.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, id.data() + i, 8);
    h = (h ^ word) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
  }
  if (i < id.size()) {
    uint64_t word = 0;
    std::memcpy(&word, id.data() + i, id.size() - i);
    h = (h ^ word) * 0xbf58476d1ce4e5b9ull;
  }
  return Mix(h);
}

size_t RequestIdIndex::Probe(std::string_view id, uint64_t hash) const {
  size_t mask = slots_.size() - 1;
  auto tag = static_cast<uint32_t>(hash >> 32);
  for (size_t i = static_cast<size_t>(hash) & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.handle == kNoTrial || (s.tag == tag && this->id(s.handle) == id)) return i;
  }
}

TrialHandle RequestIdIndex::Find(std::string_view id) const {
  if (slots_.empty()) return kNoTrial;
  return slots_[Probe(id, Hash(id))].handle;
}

TrialHandle RequestIdIndex::Lookup(std::string_view id) {
  if (recent_ != kNoTrial && this->id(recent_) == id) return recent_;
  TrialHandle found = Find(id);
  if (found != kNoTrial) recent_ = found;
  return found;
}

TrialHandle RequestIdIndex::Add(std::string_view id) {
  // Every layer of a search registers the Create it emits: the id just added comes back at once.
  if (size() > 0 && this->id(static_cast<TrialHandle>(size() - 1)) == id) {
    return recent_ = static_cast<TrialHandle>(size() - 1);
  }
  // Load at most 3/4: the probes after the first mostly stay in its cache line (8 slots).
  if (4 * (size() + 1) > 3 * slots_.size()) Grow();
  uint64_t hash = Hash(id);
  Slot& s = slots_[Probe(id, hash)];
  if (s.handle != kNoTrial) return recent_ = s.handle;
  s.tag = static_cast<uint32_t>(hash >> 32);
  s.handle = static_cast<TrialHandle>(size());
  if (size() == 0) id_length_ = id.size();
  if (id.size() != id_length_) mixed_lengths_ = true;
  text_.append(id);
  ends_.push_back(text_.size());
  return recent_ = s.handle;
}

void RequestIdIndex::Grow() {
  slots_.assign(slots_.empty() ? 16 : 2 * slots_.size(), Slot{});
  size_t mask = slots_.size() - 1;
  for (TrialHandle h = 0; h < size(); ++h) {
    uint64_t hash = Hash(id(h));
    size_t i = static_cast<size_t>(hash) & mask;
    while (slots_[i].handle != kNoTrial) i = (i + 1) & mask;
    slots_[i] = Slot{static_cast<uint32_t>(hash >> 32), h};
  }
}

void RequestIdIndex::Clear() {
  text_.clear();
  ends_.assign(1, 0);
  slots_.clear();
  id_length_ = 0;
  mixed_lengths_ = false;
  recent_ = kNoTrial;
}

}  // namespace det::master::searcher
