// DSOP, the distributed sum of outer products (seed 004): each of P ranks
// holds a (N elements) and b (M elements); every rank ends with
// G = sum over ranks of a_r b_r^T, N x M, row-major. Four algorithms, each a
// sequence of catalogue collectives with local products between them (the
// runtime runs them: Communicator::sum_outer_products); this file holds what
// they have in common with the model: names, the split of G among ranks and
// the predicted times.
//
//   algorithm                 collectives (elements per rank)      local multiply-adds
//   allgather                 allgather (N + M)                     P N M
//   allreduce                 allreduce (N M)                       N M
//   allreduce_ring            partitioned ring allreduce (N M),     N M, overlapped with
//                             part k computed while k-1 travels     the ring part by part
//   generalized_rabenseifner  allgather (N + M), then allgather     N M (P pairs over
//                             (floor(N M / P), each rank's block)   N M / P elements)
//
// Generalized Rabenseifner: rank q computes G's elements
// [q B, (q + 1) B), B = floor(N M / P), from every rank's pair; the last
// N M - P B (< P) elements every rank computes itself, so the second
// allgather needs no padding.
#pragma once

#include <earlybird/collectives/predict.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace earlybird::coll {

enum class OuterProductAlgorithm : std::uint8_t { allgather, allreduce, allreduce_ring, generalized_rabenseifner };

std::span<const OuterProductAlgorithm> outer_product_algorithms();
std::string_view to_string(OuterProductAlgorithm algorithm);
std::optional<OuterProductAlgorithm> find_outer_product_algorithm(std::string_view name);
// "allgather, allreduce, ..." (for messages).
std::string outer_product_algorithm_names();

// Generalized Rabenseifner's split of G's `elements` (N M) among `ranks`.
struct ElementBlocks {
  std::size_t block = 0;       // elements per rank: rank q owns [q block, (q + 1) block)
  std::size_t tail_begin = 0;  // ranks x block: every rank computes [tail_begin, elements)
};
ElementBlocks element_blocks(int ranks, std::size_t elements);

// allreduce_ring's parts: rows of G in up to `kRingParts` consecutive groups
// (as equal as rows allow), as element counts; one empty part when G is
// empty.
constexpr std::size_t kRingParts = 8;
std::vector<std::size_t> ring_row_parts(std::size_t rows, std::size_t cols);

struct OuterProductPrediction {
  OuterProductAlgorithm algorithm;
  double seconds;
};

// The model's time for each algorithm, fastest first (ties: the order above).
// Collectives: the catalogue's fastest prediction for their size
// (predict_all); a local multiply-add over one element of G costs what
// reducing one element does (gamma x element bytes: both stream G once);
// allreduce_ring overlaps its products with the ring, part by part.
std::vector<OuterProductPrediction> predict_outer_products(int ranks, std::size_t rows, std::size_t cols,
                                                           std::size_t elem_bytes, const LevelCosts& costs);

}  // namespace earlybird::coll
