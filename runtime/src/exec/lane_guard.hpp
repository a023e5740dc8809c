// LaneGuard: knows, per peer, the last collective the peer is known to have
// finished, so that no rank writes (data or flags) into a peer's window lane
// that the peer may still read.
//
// Collective n uses lane n % L of its kind (L lanes: WindowLayout::kLanes
// large or kSmallLanes small ones for Operations, kInlineLanes for the inline
// lines), last used by n-L or earlier: writing a peer's lane
// for n is safe once the peer finished n-L. Knowledge comes two ways:
//   - implied: a collective whose every rank's completion depends on every
//     rank's start (allreduce, allgather, reduce-scatter with data) tells a rank
//     that completes n that every peer started n, hence finished n-1;
//   - asked: otherwise (reduce, broadcast), the rank reads the peer's done word
//     (header of its window) with an atomic remote read, and waits if needed.
// Drive holder only (exec/driver.hpp).
#pragma once

#include "../rma/transport.hpp"
#include "../rma/window_layout.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace earlybird {

class LaneGuard {
 public:
  LaneGuard(Transport& transport, int ranks) : transport_(&transport), known_done_(static_cast<std::size_t>(ranks), 0) {}

  // May this rank write `peer`'s lane for collective `sequence`, of `lanes`
  // lanes taken in turn?
  bool free(int peer, std::uint64_t sequence, int lanes) const {
    const auto distance = static_cast<std::uint64_t>(lanes);
    return sequence <= distance || known_done_[static_cast<std::size_t>(peer)] >= sequence - distance;
  }
  // free(), after asking `peer` how far it got (one remote read) if it is
  // not known to be.
  bool make_free(int peer, std::uint64_t sequence, int lanes) {
    if (free(peer, sequence, lanes)) return true;
    auto& known = known_done_[static_cast<std::size_t>(peer)];
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
  // This rank finished collective `sequence`; `all_started` when the
  // collective's completion implies every rank started it.
  void finished(std::uint64_t sequence, bool all_started) {
    transport_->store_local(WindowLayout::kDoneWordOffset, sequence);
    if (!all_started) return;
    for (auto& known : known_done_) known = std::max(known, sequence - 1);
  }

 private:
  Transport* transport_;
  std::vector<std::uint64_t> known_done_;
};

}  // namespace earlybird
