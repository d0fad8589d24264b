#pragma once
// RequestIdIndex: dense integer handles for request ids. Request ids (UUID text) are what the
// master and the snapshots speak; inside a searcher every trial is a handle 0, 1, 2, ... in the
// order its id was first added, so per-trial state lives in vectors indexed by handle instead of
// maps keyed by 36-byte strings. The id -> handle lookup is one open-addressing table (linear
// probing, load at most 3/4, a 32-bit tag per slot so a probe compares a string only when the
// hashes agree) over the ids stored end to end in one buffer: O(1) with about two cache lines
// touched (the slot and the id's text), at any number of trials. Ids are never removed. Pure,
// not thread-safe.

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace det::master::searcher {

using TrialHandle = uint32_t;
inline constexpr TrialHandle kNoTrial = std::numeric_limits<TrialHandle>::max();

class RequestIdIndex {
 public:
  // The handle of `id`; a new id gets the next handle (size() before the call).
  TrialHandle Add(std::string_view id);
  // The handle of `id`, or kNoTrial.
  TrialHandle Find(std::string_view id) const;
  // Find, checking first the id last returned by Add or Lookup: an event names one trial and
  // the actions it returns mostly name the same one, so most lookups of a search skip the
  // table, whose slots lie outside the L2 cache at 10,000 trials.
  TrialHandle Lookup(std::string_view id);
  // REQUIRES: handle < size(). Valid until the next Add or Clear.
  std::string_view id(TrialHandle handle) const {
    // Ids of one length (UUIDs) are found without reading ends_: one cache line less per lookup.
    if (!mixed_lengths_) return std::string_view(text_.data() + handle * id_length_, id_length_);
    return std::string_view(text_).substr(ends_[handle], ends_[handle + 1] - ends_[handle]);
  }
  size_t size() const { return ends_.size() - 1; }
  void Clear();

 private:
  struct Slot {
    uint32_t tag = 0;
    TrialHandle handle = kNoTrial;  // kNoTrial: empty
  };

  static uint64_t Hash(std::string_view id);
  // Index of the slot holding `id`, or of the empty slot where it would go.
  size_t Probe(std::string_view id, uint64_t hash) const;
  void Grow();

  std::string text_;                // every id, end to end, in handle order
  std::vector<size_t> ends_ = {0};  // id h is text_[ends_[h], ends_[h + 1])
  size_t id_length_ = 0;            // the length of every id, unless mixed_lengths_
  bool mixed_lengths_ = false;
  std::vector<Slot> slots_;        // size 0 or a power of two
  TrialHandle recent_ = kNoTrial;  // last handle returned by Add or Lookup
};

}  // namespace det::master::searcher
