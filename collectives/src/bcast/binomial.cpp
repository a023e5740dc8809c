// bcast_binomial — the root's vector travels down a binomial tree: rank r != 0
// receives it from r - lowbit(r) and passes it to r + 2^j for every 2^j <
// lowbit(r), largest subtree first (tree drawn in trees.hpp).
//
// Cost (Hockney, m bytes): ceil(log2 P)(alpha + beta m) — the root sends
// ceil(log2 P) times, each subtree then proceeds in parallel.
//   per rank r: one put of `count` elements per child (the root:
//   ceil(log2 P)); rounds (dependency depth) = max over r < P of the number
//   of set bits of r, which is log2 P for powers of two.
// Best for small vectors; every hop moves the whole vector, so large vectors
// want scatter_allgather or a pipelined chain.
//
// Limitations: one scratch vector per non-root rank (received at the
// vector's own offsets, forwarded from there, never reused, so no
// acknowledgement flags); non-root ranks never read their input.
//
// State for P = 4 (tree 0 -> {2, 1}, 2 -> {3}; who holds the vector):
//   round   sends           holders
//   start   -               0
//   1       0->2            0, 2
//   2       0->1, 2->3      0, 1, 2, 3
#include "bcast_phases.hpp"
#include "trees.hpp"

#include <earlybird/collectives/bcast.hpp>

namespace earlybird::coll {
namespace detail {

void bcast_binomial_phase(Builder& b, Buffer source) { tree_bcast_phase(b, source, binomial_tree(b.ranks()), 0); }

}  // namespace detail

Schedule bcast_binomial(int ranks, std::size_t count) {
  Builder b("bcast_binomial", ranks, count);
  detail::bcast_binomial_phase(b, Buffer::input);
  return std::move(b).finish();
}

}  // namespace earlybird::coll
