// Silent roles: a rank that receives nothing in a collective (a bcast's root,
// a reduce's non-root, on the inline lines or in a tree) finishes without
// reading anything its peers wrote, so it alone would never see that a peer
// called a different collective. Where two such ranks disagree (two ranks
// that both take themselves for the root of a bcast, reduces whose roots
// are each other, a bcast's root beside a reduce's non-root), nobody reads,
// both return, and the data silently goes nowhere.
//
// On directly reachable windows such a rank compares words with its peers,
// in the silent line of its sequence's inline lane (line 37, which neither
// the inline lines' data nor peer reads reach; lanes are taken in turn, 8 of
// them, guarded by the lane guard like the inline lines):
//   1. its last announcement in this lane, of sequence k: a peer's silent
//      word of sequence k with another value disagreed at k;
//   2. it announces: its silent word = this call's flag value;
//   3. a peer's silent word of this sequence or a later one with another
//      value disagrees now.
// No fence: two silent ranks that disagree at n may both miss the other in
// step 3 (each one's store still on its way). Then the one of them that next
// takes this lane for a silent role, at m >= n + 8, finds the other's word of
// n in step 1: the lane guard let it take the lane only once it knew the
// other finished n (an acquire of a word the other released after its
// announcement), and the other has not announced in this lane since (it
// would have been the one). What escapes: a disagreement in the last silent
// call either rank makes in that lane, where both stores crossed. A fence
// between steps 2 and 3 would close it (store-load order, as in Dekker's
// algorithm), but it waits for every earlier store to a line a peer has
// read: in five alternations at P = 2 a bcast of 8 bytes with it took 0.87-
// 1.02 x Open MPI's, against 0.70-0.89 without the check; without the fence
// 0.83-1.00 against 0.72-0.98 (docs/benchmarks.md, "Silent roles").
//
// Cost: a load per peer and one store, of silent lines that the peers of a
// matching call do not write (a bcast's non-roots, a reduce's root: the
// lines stay in this rank's cache). Not across nodes: there the peers' words
// are round trips away, and a silent rank's disagreement is not detected (as
// MPI libraries do not detect it either).
//
// state      does                                                 then
// earlier    each peer's word: of the last announcement's sequence, another value → disagreed then
// announce   own silent word = value                              compare
// compare    each peer's word: this sequence or later, another value → disagrees now
// Drive holder only.
#pragma once

#include "window_words.hpp"
#include "../rma/window_layout.hpp"

#include <earlybird/collectives/catalogue.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace earlybird {

// The silent line's offset in an inline lane: past the inline lines' data,
// before the two lines peer reads keep at the lane's end (exec/peer_reads).
constexpr std::size_t kSilentLineOffset = (coll::kInlineLines - 3) * coll::kInlineLineBytes;
static_assert(coll::kInlinePayloadOffset + coll::kInlineLinesBytes <= kSilentLineOffset);

class SilentLines {
 public:
  struct Disagreement {
    int peer;
    std::uint64_t sequence;  // the call it disagreed in
  };
  // Steps 1-3 above for a silent role of `value` (flag_value of this rank's
  // call) in inline lane `lane`, at `lane_offset` of every rank's window
  // (`windows`, directly reachable; `self` this rank). The lane guard must
  // have freed the lane for this sequence.
  std::optional<Disagreement> compare(const std::vector<std::byte*>& windows, int self, int lane,
                                      std::size_t lane_offset, std::uint64_t value) {
    std::uint64_t& announced = announced_[static_cast<std::size_t>(lane)];
    if (announced != 0)
      if (const int peer = disagreeing(windows, self, lane_offset, announced, false); peer >= 0)
        return Disagreement{peer, sequence_of(announced)};
    store_release(windows[static_cast<std::size_t>(self)] + lane_offset + kSilentLineOffset, value);
    announced = value;
    if (const int peer = disagreeing(windows, self, lane_offset, value, true); peer >= 0)
      return Disagreement{peer, sequence_of(value)};
    return std::nullopt;
  }

 private:
  static std::uint64_t sequence_of(std::uint64_t value) { return value >> kSignatureBits; }
  // The first peer whose silent word carries `value`'s sequence (or, with
  // `or_later`, a later one) with another value; -1 if none.
  static int disagreeing(const std::vector<std::byte*>& windows, int self, std::size_t lane_offset,
                         std::uint64_t value, bool or_later) {
    for (std::size_t rank = 0; rank < windows.size(); ++rank) {
      if (static_cast<int>(rank) == self) continue;
      const std::uint64_t seen = load_acquire(windows[rank] + lane_offset + kSilentLineOffset);
      const bool that_call = or_later ? sequence_of(seen) >= sequence_of(value) : sequence_of(seen) == sequence_of(value);
      if (that_call && seen != value) return static_cast<int>(rank);
    }
    return -1;
  }

  std::array<std::uint64_t, WindowLayout::kInlineLanes> announced_{};  // per lane: this rank's last announcement
};

}  // namespace earlybird
