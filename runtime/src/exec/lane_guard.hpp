// LaneGuard: knows, per peer, the last collective the peer is known to have
// finished, so that no rank writes (data or flags) into a peer's window lane
// that the peer may still read.
//
// Collective n uses lane n % L of its kind (L lanes: WindowLayout::kLanes
// large or kSmallLanes small ones for Operations, kInlineLanes for the inline
// lines), last used by n-L or earlier: writing a peer's lane
// for n is safe once the peer finished n-L. Knowledge comes three ways:
//   - implied: a collective whose every rank's completion depends on every
//     rank's start (allreduce, allgather, reduce-scatter with data) tells a rank
//     that completes n that every peer started n, hence finished n-1;
//   - told: where reading a peer's word is a round trip by messages
//     (Transport::waits_for_messages), a rank that finishes a rooted
//     collective (reduce, broadcast) stores its done sequence number into
//     the done table of each rank that wrote into its lane (one message
//     each, nobody waits for it), at most once per kTellEvery collectives
//     per writer, at the drive holder's next turn with nothing else to do
//     (tell_untold); the writer reads its own table, and waits for a tell
//     that would free the lane rather than ask, up to kTellWait;
//   - asked: otherwise, the rank reads the peer's done word (header of its
//     window) with an atomic remote read, and waits if needed.
//
// Per writer w, at this rank (told):
//   finished n, rooted, n >= told[w] + kTellEvery  → w untold; told[w] = n
//   finished n, rooted, otherwise                  → nothing
//   a drive turn without progress, w untold        → tell w the done word
// At P = 2 across hosts, bcast from rank 0 in a loop: rank 1 tells rank 0
// after collectives 1, 5, 9 ..., while it waits for the next one's data;
// rank 0 asks only when a tell it waits for is kTellWait late.
// Drive holder only (exec/driver.hpp).
#pragma once

#include "../rma/transport.hpp"
#include "../rma/window_layout.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

namespace earlybird {

class LaneGuard {
 public:
  using Clock = std::chrono::steady_clock;
  // A collective tells each writer at most once per this many (half the
  // small lanes' distance: a writer that runs up to four collectives ahead
  // finds the word it needs in its table).
  static constexpr std::uint64_t kTellEvery = WindowLayout::kSmallLanes / 2;
  // How long a writer waits for a tell that would free a lane before it
  // asks: the tell may never come (the peer tells the ranks that wrote into
  // its lane, and this rank may not have since).
  static constexpr std::chrono::microseconds kTellWait{200};

  LaneGuard(Transport& transport, const WindowLayout& layout)
      : transport_(&transport),
        layout_(layout),
        tells_(transport.waits_for_messages()),
        known_done_(static_cast<std::size_t>(layout.ranks), 0),
        told_(tells_ ? known_done_.size() : 0, 0),
        tell_waits_(told_.size()) {}

  // May this rank write `peer`'s lane for collective `sequence`, of `lanes`
  // lanes taken in turn?
  bool free(int peer, std::uint64_t sequence, int lanes) const {
    const auto distance = static_cast<std::uint64_t>(lanes);
    return sequence <= distance || known_done_[static_cast<std::size_t>(peer)] >= sequence - distance;
  }
  // free(), after reading what `peer` told this rank, then asking it how far
  // it got (one remote read), while it is not known to be. A peer whose next
  // tell would free the lane is not asked until kTellWait passed without it
  // (a writer that runs ahead of a receiver in a loop would otherwise ask on
  // nearly every call).
  bool make_free(int peer, std::uint64_t sequence, int lanes) {
    if (free(peer, sequence, lanes)) return true;
    auto& known = known_done_[static_cast<std::size_t>(peer)];
    if (tells_) {
      const std::uint64_t told = transport_->load_flag(layout_.done_table_offset(peer));
      known = std::max(known, told);
      if (free(peer, sequence, lanes)) return true;
      const bool tell_would_free = told > 0 && told + kTellEvery + static_cast<std::uint64_t>(lanes) >= sequence;
      if (tell_would_free && !waited_for_tell(peer, sequence)) return false;
    }
    known = std::max(known, transport_->load_remote(peer, WindowLayout::kDoneWordOffset));
    return free(peer, sequence, lanes);
  }
  // May this rank (`self`) rewrite its own lane for `sequence`, which every
  // peer may have read in sequence - lanes? Asks the peers not known to be free.
  bool all_free(int self, std::uint64_t sequence, int lanes) {
    bool free = true;
    for (int peer = 0; peer < static_cast<int>(known_done_.size()); ++peer)
      if (peer != self) free = make_free(peer, sequence, lanes) && free;
    return free;
  }
  // Whether finished() tells writers (so the caller collects them).
  bool tells_writers() const { return tells_; }
  // This rank finished collective `sequence`; `all_started` when the
  // collective's completion implies every rank started it; `writers`: the
  // ranks that wrote into this rank's lane in it (CollectiveTask::add_writers),
  // to be told when tells_writers() and the collective was not all started.
  void finished(std::uint64_t sequence, bool all_started, std::span<const int> writers = {}) {
    transport_->store_local(WindowLayout::kDoneWordOffset, sequence);
    done_ = sequence;
    if (all_started) {
      for (auto& known : known_done_) known = std::max(known, sequence - 1);
      return;
    }
    if (tells_) mark_untold(writers, sequence);
  }
  // Tells the writers due a tell how far this rank got (one message each).
  // For a moment the drive's holder has nothing else to do: the message
  // costs the sender a few microseconds (across the emulated hosts the
  // kernel's whole path to the peer's socket), which would otherwise delay
  // the collective's return.
  void tell_untold() {
    const std::size_t own_word = layout_.done_table_offset(transport_->rank());
    for (int writer : untold_) transport_->post_remote_words(writer, own_word, &done_, 1);
    untold_.clear();
  }

 private:
  // Whether this rank has waited kTellWait for `peer`'s tell freeing its
  // lane for `sequence` (then it asks, and waits anew); a new sequence
  // starts a new wait.
  bool waited_for_tell(int peer, std::uint64_t sequence) {
    auto& wait = tell_waits_[static_cast<std::size_t>(peer)];
    const auto now = Clock::now();
    if (wait.sequence != sequence) {
      wait = {sequence, now};
      return false;
    }
    if (now - wait.since < kTellWait) return false;
    wait.since = now;
    return true;
  }
  void mark_untold(std::span<const int> writers, std::uint64_t sequence) {
    const int self = transport_->rank();
    for (int writer : writers) {
      if (writer < 0 || writer == self) continue;
      auto& told = told_[static_cast<std::size_t>(writer)];
      if (told != 0 && sequence < told + kTellEvery) continue;
      told = sequence;
      if (std::find(untold_.begin(), untold_.end(), writer) == untold_.end()) untold_.push_back(writer);
    }
  }

  Transport* transport_;
  WindowLayout layout_;
  bool tells_;
  std::vector<std::uint64_t> known_done_;
  std::uint64_t done_ = 0;            // the last collective this rank finished
  std::vector<std::uint64_t> told_;  // per writer: the last sequence told or due (tells_ only)
  std::vector<int> untold_;          // writers due a tell, each once
  struct TellWait {
    std::uint64_t sequence = 0;
    Clock::time_point since;
  };
  std::vector<TellWait> tell_waits_;  // per peer: a wait for its tell (tells_ only)
};

}  // namespace earlybird
