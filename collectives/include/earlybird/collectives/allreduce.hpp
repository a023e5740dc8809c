// Allreduce schedule generators and the catalogue the runtime selects from.
// Each generator is a pure function; its file opens with cost, limitations and
// a state table for P = 4.
#pragma once

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/schedule.hpp>

#include <cstddef>
#include <span>
#include <string_view>

namespace earlybird::coll {

Schedule allreduce_ring(int ranks, std::size_t count);
Schedule allreduce_segmented_ring(int ranks, std::size_t count, std::size_t segment_elems);
Schedule allreduce_recursive_doubling(int ranks, std::size_t count);
Schedule allreduce_recursive_doubling_halves(int ranks, std::size_t count);
Schedule allreduce_rabenseifner(int ranks, std::size_t count);
Schedule allreduce_linear(int ranks, std::size_t count);
// segment_elems = 0: one segment.
Schedule allreduce_chain(int ranks, std::size_t count, std::size_t segment_elems);

// The catalogue's allreduce table (catalogue.hpp has the general form).
inline std::span<const Algorithm> allreduce_algorithms() { return algorithms(Collective::allreduce); }
inline const Algorithm* find_allreduce(std::string_view name) { return find_algorithm(Collective::allreduce, name); }

}  // namespace earlybird::coll
