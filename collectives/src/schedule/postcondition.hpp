// Internal to the verifier: what each collective demands of a schedule, with
// root 0 (the contract is in verify.hpp).
//
// Element identity: a content interval at position x of some buffer holds
// input element x + shift of its contributors, so the verifier can tell data
// that landed at the wrong offset. Inputs start with shift 0; a copy or put
// from [s, s+n) to [t, t+n) adds s - t. An output region below says which
// ranks must have contributed and which shift every position must carry:
//   allreduce       rank r, [0, n):        all ranks, shift 0
//   reduce          rank 0, [0, n):        all ranks, shift 0 (others: none)
//   bcast           rank r, [0, n):        exactly {0}, shift 0
//   allgather       rank r, [jn, jn+n):    exactly {j}, shift -jn
//                   (position jn+i holds rank j's input element i)
//   reduce_scatter  rank r, [0, n):        all ranks, shift rn
//                   (position i holds every rank's input element rn+i)
#pragma once

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/schedule.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace earlybird::coll::detail {

constexpr int kRoot = 0;
constexpr int kEveryRank = -1;

// A range of one rank's output whose every position must hold input element
// (position + shift) of exactly `contributor` (or of every rank when
// contributor == kEveryRank).
struct OutputRegion {
  Range range;
  int contributor = kEveryRank;
  std::int64_t shift = 0;
};

inline std::int64_t signed_elems(std::size_t n) { return static_cast<std::int64_t>(n); }

inline std::vector<OutputRegion> expected_output(Collective collective, int rank, int ranks, Shape shape) {
  const std::size_t n = shape.output;
  switch (collective) {
    case Collective::allreduce: return {{{0, n}, kEveryRank, 0}};
    case Collective::reduce:
      if (rank != kRoot) return {};
      return {{{0, n}, kEveryRank, 0}};
    case Collective::bcast: return {{{0, n}, kRoot, 0}};
    case Collective::allgather: {
      const std::size_t block = shape.input;
      std::vector<OutputRegion> regions;
      for (int j = 0; j < ranks && block > 0; ++j) {
        const std::size_t begin = static_cast<std::size_t>(j) * block;
        regions.push_back({{begin, block}, j, -signed_elems(begin)});
      }
      return regions;
    }
    case Collective::reduce_scatter:
      return {{{0, n}, kEveryRank, signed_elems(static_cast<std::size_t>(rank) * n)}};
  }
  return {};
}

// A reduce must not write the output of any rank but the root (MPI_Reduce
// leaves those buffers untouched; partial results belong in scratch).
inline bool may_write_output(Collective collective, int rank) {
  return collective != Collective::reduce || rank == kRoot;
}

// A broadcast must not read any rank's input but the root's: on those ranks the
// caller's input buffer is not part of the call.
inline bool may_read_input(Collective collective, int rank) {
  return collective != Collective::bcast || rank == kRoot;
}

// Whether input element x is output element x in place (coll::input_in_output
// is 0): the Builder's model, which derives ordering edges from it. Not an
// allgather: the Builder tracks its input apart from its output, and its
// schedules are in-place safe without edges (the verifier checks it): the
// only writes to a rank's own block carry its own data.
inline bool input_aliases_output(Collective collective) { return collective != Collective::allgather; }

}  // namespace earlybird::coll::detail
