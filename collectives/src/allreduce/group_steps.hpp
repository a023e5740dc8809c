// Internal: composing an allreduce from catalogue allreduces run inside
// groups of ranks (SUARA's grid steps, the hierarchical allreduce's network
// step).
#pragma once

#include <earlybird/collectives/builder.hpp>
#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/simulate.hpp>

#include <cstddef>
#include <string_view>
#include <vector>

namespace earlybird::coll::detail {

// Appends `sub`'s steps, run by the ranks of `group` (virtual rank k of `sub`
// is group[k]), on the elements [offset, offset + sub.count()) of the input
// and output buffers; `sub`'s input is read from `input_as` (the user's
// input, or the output earlier steps left). Scratch ranges are kept. A copy
// the mapping turns into a copy onto itself (in-place steps) is dropped.
void append_on_group(Builder& b, const Schedule& sub, const std::vector<int>& group, Buffer input_as,
                     std::size_t offset = 0);

// The members of `group` a focused build (Builder::keep_only) keeps, as the
// group's virtual ranks (AlgorithmParams::keep for a schedule replayed onto
// the group); empty when it keeps them all.
std::vector<int> kept_members(const Builder& b, const std::vector<int>& group);

// Whether the candidate `name` (suara_step_candidates) is rank-symmetric at
// (ranks, count) under `model`: every rank runs the same timeline, so the
// simulator run on one rank's plan (simulate_symmetric) predicts exactly what
// the whole schedule's simulation does (tests/unit/test_simulate_symmetric.cpp):
// the ring family where P divides the count, recursive doubling at powers of
// two, Rabenseifner at powers of two dividing the count; one-level models
// without shared cores only.
bool predicted_from_one_rank(std::string_view name, int ranks, std::size_t count, const CostModel& model);
// The simulator's time for the candidate `name` over `ranks` ranks: from rank
// 0's plan where predicted_from_one_rank holds (O(that rank's steps): P =
// 16384 in milliseconds); above kWholeSimulationRanks, for a candidate that
// holds it at multiples of P, from rank 0's plans there — at P for a count
// below P, else on the line between the multiples around the count —; else
// from the whole schedule (at P = 16384, 8 bytes, Rabenseifner's took 55 ms,
// its one-rank plan at P elements 4). The ring family so predicted is
// within 0.1 % of its whole simulation, Rabenseifner within 12 % (at P - 1
// elements its uneven chunks take 11 % longer than P even ones;
// tests/unit/test_simulate_symmetric.cpp).
constexpr int kWholeSimulationRanks = 256;
double predicted_group_step(std::string_view name, int ranks, std::size_t count, std::size_t elem_bytes,
                            const CostModel& model);

// The bounds of the catalogue allreduce `name` over `ranks` ranks: its own
// (Algorithm::bounds) where it has them, else its whole schedule's maxima.
PlanBounds group_bounds(std::string_view name, int ranks, std::size_t count, std::size_t elem_bytes);

struct GroupAlgorithm {
  std::string_view name;  // empty: one rank, nothing to do
  double predicted_s = 0;
};
// The flat allreduce (suara_step_candidates) the schedule simulator predicts
// fastest for `ranks` ranks and `count` elements under `model`; remembered
// per process (detail::Remembered).
GroupAlgorithm fastest_group_algorithm(int ranks, std::size_t count, std::size_t elem_bytes, const CostModel& model);

}  // namespace earlybird::coll::detail
