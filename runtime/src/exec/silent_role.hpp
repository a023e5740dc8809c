// Silent roles: a rank that receives nothing in a collective (a bcast's root,
// a reduce's non-root, on the inline lines or in a tree) finishes without
// reading anything its peers wrote, so it alone would never see that a peer
// called a different collective. Where two such ranks disagree (two ranks
// that both take themselves for the root of a bcast, reduces whose roots
// are each other, a bcast's root beside a reduce's non-root), nobody reads,
// both return, and the data silently goes nowhere.
//
// On directly reachable windows such a rank compares words with its peers:
// it stores its call's flag value in the word of its inline lane for the
// sequence (the inline lines publish it there anyway), fences (sequentially
// consistent), then loads every peer's word of that lane. A word carrying
// this sequence, or a later one, with another value is a disagreeing call.
//
// Why it cannot miss two silent ranks that disagree: each stores before it
// loads, with a full fence between, so at least one of them loads the
// other's word (store-load order, as in Dekker's algorithm). The word it
// loads is this sequence's or an older one: the peer rewrites that lane only
// for sequence + 8, once it knows this rank finished this sequence (the lane
// guard), which is after this check. A silent rank disagreeing with a rank
// that does receive is caught by that rank, which reads a word with another
// value or waits for one that never comes (its watchdog).
//
// Cost: one fence and a load per peer, of words peers seldom write (a
// bcast's non-roots, a reduce's root publish nothing in those lanes: the
// lines stay in this rank's cache). Not across nodes: there the peers'
// words are round trips away, and a silent rank's disagreement is not
// detected (as MPI libraries do not detect it either).
//
// state      does                                          then
// announce   own lane word = value (unless already)        fence
// compare    each peer's word: older sequence, or value    done
//            a word of this sequence or later, another value → the peer disagrees
#pragma once

#include "window_words.hpp"
#include "../rma/window_layout.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace earlybird {

// The first peer whose word, at `lane_offset` of its window, disagrees with
// `value` (flag_value of this rank's call); -1 if none does. `windows`: every
// rank's window, directly reachable; `self` this rank.
inline int disagreeing_peer(const std::vector<std::byte*>& windows, int self, std::size_t lane_offset,
                            std::uint64_t value) {
  std::byte* own = windows[static_cast<std::size_t>(self)] + lane_offset;
  if (load_acquire(own) != value) store_release(own, value);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const std::uint64_t sequence = value >> kSignatureBits;
  for (std::size_t rank = 0; rank < windows.size(); ++rank) {
    if (static_cast<int>(rank) == self) continue;
    const std::uint64_t seen = load_acquire(windows[rank] + lane_offset);
    if ((seen >> kSignatureBits) >= sequence && seen != value) return static_cast<int>(rank);
  }
  return -1;
}

}  // namespace earlybird
