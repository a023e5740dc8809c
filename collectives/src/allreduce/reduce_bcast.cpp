// allreduce_reduce_bcast — any reduce to rank 0 followed by a broadcast of
// rank 0's result ("nonoverlapping": the broadcast of a segment starts only
// once rank 0 holds it fully reduced). The phases are the reduce and bcast
// generators' own (../reduce/reduce_phases.hpp, ../bcast/bcast_phases.hpp);
// the broadcast reads rank 0's output. The catalogue names a few pairs:
//   binomial            binomial reduce      + binomial bcast
//   binary_tree         binary-tree reduce   + binary-tree bcast (pipelined)
//   reduce_bcast        binomial reduce      + binomial bcast (the default pair)
//   chain_reduce_bcast  chain reduce         + chain bcast (pipelined)
//   greedy_reduce_bcast greedy reduce        + binary-tree bcast (pipelined)
//
// Cost (Hockney): the reduce's plus the bcast's, e.g. binomial:
//   2 ceil(log2 P)(alpha + beta m) + ceil(log2 P) gamma m
// and binary_tree, q = m/ms segments, per phase
//   2(ceil(log2(P+1)) - 1)(alpha + beta ms + gamma ms) + 4(q-1)(alpha + beta ms + gamma ms).
//   per rank: the reduce phase's puts, elements sent and reduced plus the
//   bcast phase's; rounds: the sum of the two phases' rounds (each segment
//   is broadcast after it is reduced). Binomial: rank r with c(r) children
//   (r + 2^j for 2^j below r's lowest set bit, or below P for rank 0; the
//   same in both trees) does [r != 0] + c(r) puts of count elements and
//   reduces c(r) count; rounds 2 floor(log2 P).
// Any P, no fold: the trees are defined for every P.
//
// Limitations: as the two phases (their files list them); the operator must
// be commutative exactly when the reduce phase needs it (a broadcast
// combines nothing). Rank 0 does all the final reduction work and is the
// only source of the broadcast, so for large vectors the ring or Rabenseifner
// move less data per rank. Scratch: the reduce phase's, then the bcast
// phase's above it (a fresh region, so the bcast never reuses a slot the
// reduce read and no acknowledgement flag is needed).
//
// State for P = 4, binomial (reduce tree 0 <- {1, 2}, 2 <- {3}; bcast tree
// 0 -> {2, 1}, 2 -> {3}; what each rank holds after the round):
//   step            rank 0     rank 1     rank 2     rank 3
//   start           {0}        {1}        {2}        {3}
//   reduce round 1  {0,1}                 {2,3}              (1->0, 3->2)
//   reduce round 2  {0-3}                                    (2->0)
//   bcast round 1   {0-3}                 {0-3}              (0->2)
//   bcast round 2   {0-3}      {0-3}      {0-3}      {0-3}   (0->1, 2->3)
#include "../bcast/bcast_phases.hpp"
#include "../reduce/reduce_phases.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/builder.hpp>

#include <stdexcept>
#include <string>

namespace earlybird::coll {
namespace {

void append_reduce(Builder& b, ReducePhase phase, const AlgorithmParams& params) {
  switch (phase) {
    case ReducePhase::binomial: return detail::reduce_binomial_phase(b);
    case ReducePhase::chain: return detail::reduce_chain_phase(b, params.segment_elems);
    case ReducePhase::binary_tree: return detail::reduce_binary_tree_phase(b, params.segment_elems);
    case ReducePhase::kary_tree: return detail::reduce_kary_tree_phase(b, params.fanout, params.segment_elems);
    case ReducePhase::greedy: return detail::reduce_greedy_phase(b, params.segment_elems);
  }
  throw std::invalid_argument("allreduce_reduce_bcast: unknown reduce phase");
}

// The broadcast starts from rank 0's output, where the reduce left the result.
void append_bcast(Builder& b, BcastPhase phase, const AlgorithmParams& params) {
  switch (phase) {
    case BcastPhase::binomial: return detail::bcast_binomial_phase(b, Buffer::output);
    case BcastPhase::chain: return detail::bcast_chain_phase(b, Buffer::output, params.segment_elems);
    case BcastPhase::binary_tree: return detail::bcast_binary_tree_phase(b, Buffer::output, params.segment_elems);
    case BcastPhase::scatter_allgather: return detail::bcast_scatter_allgather_phase(b, Buffer::output);
  }
  throw std::invalid_argument("allreduce_reduce_bcast: unknown bcast phase");
}

Schedule compose(std::string name, int ranks, std::size_t count, ReduceBcast phases, const AlgorithmParams& params) {
  Builder b(std::move(name), ranks, count);
  append_reduce(b, phases.reduce, params);
  b.begin_scratch_region();  // the bcast lands above the reduce's slots: no acknowledgement flags
  append_bcast(b, phases.bcast, params);
  b.copy_unwritten_output();  // P = 1: output = input
  return std::move(b).finish();
}

}  // namespace

Schedule allreduce_reduce_bcast(int ranks, std::size_t count, ReduceBcast phases, const AlgorithmParams& params) {
  return compose("allreduce_reduce_bcast", ranks, count, phases, params);
}

Schedule allreduce_binomial(int ranks, std::size_t count) {
  return compose("allreduce_binomial", ranks, count, {ReducePhase::binomial, BcastPhase::binomial}, {});
}

Schedule allreduce_binary_tree(int ranks, std::size_t count, std::size_t segment_elems) {
  AlgorithmParams params;
  params.segment_elems = segment_elems;
  return compose("allreduce_binary_tree", ranks, count, {ReducePhase::binary_tree, BcastPhase::binary_tree}, params);
}

}  // namespace earlybird::coll
