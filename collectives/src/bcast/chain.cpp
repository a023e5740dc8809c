// bcast_chain — pipelined chain: segment s goes 0 -> 1 -> ... -> P-1; a rank
// forwards a segment as soon as it has it, so the chain carries up to P-1
// segments at once.
//
// Cost (Hockney, m bytes, segments of ms bytes, q = ceil(m/ms)):
//   (P - 1 + q - 1)(alpha + beta ms)
//   per rank r < P-1: q puts, `count` elements; rank P-1 sends nothing;
//   rounds (dependency depth) P - 1 whatever q (the pipelining shows in the
//   cost, not in the depth).
// Bandwidth-optimal for large vectors (each rank receives and sends m once);
// latency grows linearly in P.
//
// Limitations: one scratch vector per non-root rank (each segment at its own
// offset, forwarded from there, never reused: no acknowledgement flags);
// tiny segments cost a flag and a latency term each; non-root ranks never
// read their input. segment_elems = 0: one segment.
//
// State for P = 4, two segments s0, s1 (which segments each rank holds):
//   step    sends                 rank 0   rank 1   rank 2   rank 3
//   1       0->1 s0               s0 s1    s0       -        -
//   2       0->1 s1, 1->2 s0      s0 s1    s0 s1    s0       -
//   3       1->2 s1, 2->3 s0      s0 s1    s0 s1    s0 s1    s0
//   4       2->3 s1               s0 s1    s0 s1    s0 s1    s0 s1
#include "bcast_phases.hpp"
#include "trees.hpp"

#include <earlybird/collectives/bcast.hpp>

namespace earlybird::coll {
namespace detail {
namespace {

Tree chain_tree(int ranks) {
  Tree tree{std::vector<std::vector<int>>(static_cast<std::size_t>(ranks))};
  for (int r = 0; r + 1 < ranks; ++r) tree.children[static_cast<std::size_t>(r)].push_back(r + 1);
  return tree;
}

}  // namespace

void bcast_chain_phase(Builder& b, Buffer source, std::size_t segment_elems) {
  tree_bcast_phase(b, source, chain_tree(b.ranks()), segment_elems);
}

}  // namespace detail

Schedule bcast_chain(int ranks, std::size_t count, std::size_t segment_elems) {
  Builder b("bcast_chain", ranks, count);
  detail::bcast_chain_phase(b, Buffer::input, segment_elems);
  return std::move(b).finish();
}

}  // namespace earlybird::coll
