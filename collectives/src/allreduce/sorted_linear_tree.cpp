// allreduce_sorted_linear_tree (SLT, Proficz 2018) — a pipelined chain in
// arrival order: virtual rank id is the id-th rank to arrive. Each segment
// goes id 0 -> 1 -> ... -> P-1, every rank combining (partial from the left)
// op (own input) into its output (id 0 only sends), then the result goes back
// P-1 -> ... -> 0, each rank copying it out and forwarding it from scratch.
// The schedule is `chain`'s (chain_phases.hpp); what makes it SLT is the
// binding: catalogue entries `sorted_linear_tree` (estimated arrival order)
// and `arrival_chain` (arrival tickets).
//
// What a late rank does after it arrives: the partial result of every rank
// that arrived before it is already in its scratch (a put needs no action of
// the target), so the last rank, per segment, reduces its input into that
// partial and puts the result back to id P-2 — one reduce and one put per
// segment, nothing else. No step of another rank waits on it except the
// return pass (copies and forwards), and every reduction of the others is
// done by then (tests/unit/test_pap_schedules.cpp checks both). Time after
// the last arrival, q segments of ms bytes, m = q ms:
//   q(gamma ms) + (q + P - 2)(alpha + beta ms)   (reduce overlapped with the puts)
// ~ (beta + gamma) m for small segments: about the bound delta of one
// transfer of the reduced vector; a balanced ring costs ~ 2 beta m + gamma m.
//
// Cost with everyone on time: as `chain` (chain.cpp), q = ceil(count / s):
//   <= (P + q - 2)(alpha + beta ms + gamma ms) + (P + q - 2)(alpha + beta ms)
//   id 0: q puts, count elements sent, nothing reduced;
//   0 < id < P-1: 2q puts, 2 count sent, count reduced;
//   id P-1: q puts, count sent, count reduced; rounds 2(P-1).
//
// Segment: params.segment_elems, default 128 KiB, as `chain`. The paper cuts
// the vector into P chunks; here the segment is a pipelining trade-off
// independent of P. The chain's segment sweep in docs/benchmarks.md (on
// a 2-core VM) found 128 KiB best at P = 2 (1 and 16 MiB); at P = 4, four
// ranks on two cores, 512 KiB - 2 MiB were 20-30% faster. SLT takes the
// smaller one because its point is the late rank's tail, the return of the
// last segment through P-2 ranks after the late rank's last put, which grows
// with the segment.
//
// Limitations:
//   - needs a commutative operator: it combines in arrival order, which is
//     not rank order (the schedule itself keeps virtual-rank order).
//   - latency grows linearly in P (2(P-1) rounds); several late ranks delay
//     each other's segments only as far as they are late.
//   - scratch: 2 count per rank ([0, count) the reduce pass, [count, 2 count)
//     the return), never reused, so no acknowledgement flags; vectors larger
//     than the window run in batches.
//
// State for P = 4, one segment, id 3 late (sets of ids each holds):
//   step            id 0     id 1     id 2     id 3
//   start           {0}      {1}      {2}      (not there)
//   reduce 0->1              {0,1}
//   reduce 1->2                       {0-2}    partial {0-2} in scratch
//   id 3 arrives                               {0-3}   (one reduce)
//   return 3->2                       {0-3}
//   return 2->1              {0-3}
//   return 1->0     {0-3}
#include "chain_phases.hpp"

#include <earlybird/collectives/allreduce.hpp>

namespace earlybird::coll {

Schedule allreduce_sorted_linear_tree(int ranks, std::size_t count, std::size_t segment_elems) {
  Builder b("allreduce_sorted_linear_tree", ranks, count);
  detail::chain_allreduce_phases(b, segment_elems);  // 0: one segment
  return std::move(b).finish();
}

}  // namespace earlybird::coll
