// Allreduce schedule generators and the catalogue the runtime selects from.
// Each generator is a pure function; its file opens with cost, limitations and
// a state table for P = 4.
#pragma once

#include <earlybird/collectives/schedule.hpp>

#include <cstddef>
#include <span>
#include <string_view>

namespace earlybird::coll {

Schedule allreduce_ring(int ranks, std::size_t count);
Schedule allreduce_segmented_ring(int ranks, std::size_t count, std::size_t segment_elems);
Schedule allreduce_recursive_doubling(int ranks, std::size_t count);

// Parameters every generator in the catalogue accepts; an algorithm ignores
// the ones it has no use for.
struct AlgorithmParams {
  std::size_t segment_elems = 0;  // 0: the algorithm's default
};

struct AllreduceAlgorithm {
  std::string_view name;
  bool needs_commutative;  // true: may combine contributions out of rank order
  bool pipelined;          // true: honours AlgorithmParams::segment_elems
  std::size_t default_segment_bytes;  // 0 when not pipelined
  Schedule (*make)(int ranks, std::size_t count, const AlgorithmParams& params,
                   std::size_t elem_bytes);
};

std::span<const AllreduceAlgorithm> allreduce_algorithms();
// nullptr when no algorithm has that name.
const AllreduceAlgorithm* find_allreduce(std::string_view name);

}  // namespace earlybird::coll
