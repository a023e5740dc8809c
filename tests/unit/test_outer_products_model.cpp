// DSOP's model and bookkeeping (collectives/outer_products.hpp): the split
// of G among ranks, the ring's row parts, the predicted times composed from
// the catalogue's, which algorithm wins in which regime, the local kernel
// against a direct sum, and auto = the model's first choice.
#include <doctest/doctest.h>

#include "base/outer_product_kernels.hpp"
#include "config/algorithm_choice.hpp"

#include <earlybird/collectives/outer_products.hpp>

#include <chrono>
#include <cstdint>
#include <numeric>
#include <vector>
#include "../common/approx.hpp"

using namespace earlybird;
using namespace earlybird::coll;
using earlybird::testing::relative;

namespace {

LevelCosts costs(double alpha, double beta, double gamma) {
  LevelCosts c;
  c.model.alpha = alpha;
  c.model.beta = beta;
  c.model.gamma = gamma;
  c.model.copy_per_byte = 0;
  return c;
}

double predicted(const std::vector<OuterProductPrediction>& ranked, OuterProductAlgorithm algorithm) {
  for (const auto& p : ranked)
    if (p.algorithm == algorithm) return p.seconds;
  FAIL("no prediction for ", to_string(algorithm));
  return 0;
}

}  // namespace

TEST_CASE("element blocks: floor(N M / P) each, the tail below P elements") {
  CHECK(element_blocks(4, 10).block == 2);
  CHECK(element_blocks(4, 10).tail_begin == 8);
  CHECK(element_blocks(1, 7).block == 7);
  CHECK(element_blocks(1, 7).tail_begin == 7);
  CHECK(element_blocks(8, 3).block == 0);
  CHECK(element_blocks(8, 3).tail_begin == 0);
  CHECK(element_blocks(5, 0).block == 0);
}

TEST_CASE("ring row parts: up to 8 groups of whole rows, one empty part for an empty matrix") {
  CHECK(ring_row_parts(0, 5) == std::vector<std::size_t>{0});
  CHECK(ring_row_parts(4, 0) == std::vector<std::size_t>{0});
  CHECK(ring_row_parts(3, 4) == std::vector<std::size_t>{4, 4, 4});
  const auto parts = ring_row_parts(10, 2);
  CHECK(parts == std::vector<std::size_t>{4, 4, 2, 2, 2, 2, 2, 2});
  CHECK(std::accumulate(parts.begin(), parts.end(), std::size_t{0}) == 20);
}

TEST_CASE("names round-trip; unknown names are refused") {
  for (auto a : outer_product_algorithms()) CHECK(find_outer_product_algorithm(to_string(a)) == a);
  CHECK_FALSE(find_outer_product_algorithm("ring").has_value());
  CHECK(outer_product_algorithm_names() == "allgather, allreduce, allreduce_ring, generalized_rabenseifner");
}

TEST_CASE("predictions compose the catalogue's: compute free, generalized Rabenseifner = two allgathers") {
  const LevelCosts c = costs(2e-6, 1e-9, 0);
  const int p = 4;
  const std::size_t n = 100, m = 60, s = 8;
  const auto ranked = predict_outer_products(p, n, m, s, c);
  const double pairs = predict_all(Collective::allgather, p, n + m, s, true, c).front().seconds;
  const double blocks = predict_all(Collective::allgather, p, n * m / p, s, true, c).front().seconds;
  const double matrix = predict_all(Collective::allreduce, p, n * m, s, true, c).front().seconds;
  CHECK(predicted(ranked, OuterProductAlgorithm::allgather) == relative(pairs));
  CHECK(predicted(ranked, OuterProductAlgorithm::generalized_rabenseifner) == relative(pairs + blocks));
  CHECK(predicted(ranked, OuterProductAlgorithm::allreduce) == relative(matrix));
  for (std::size_t i = 1; i < ranked.size(); ++i) CHECK(ranked[i - 1].seconds <= ranked[i].seconds);
}

TEST_CASE("the regimes choose as the seed says") {
  // Compute only: allgather makes P products per element of G (8 x 2 ms),
  // allreduce one plus its reductions.
  const double one_product = 500.0 * 500 * 8 * 1e-9;
  const auto compute = predict_outer_products(8, 500, 500, 8, costs(0, 0, 1e-9));
  CHECK(predicted(compute, OuterProductAlgorithm::allgather) == relative(8 * one_product));
  CHECK(predicted(compute, OuterProductAlgorithm::allreduce) ==
        relative(one_product + predict_all(Collective::allreduce, 8, 500 * 500, 8, true, costs(0, 0, 1e-9))
                                          .front()
                                          .seconds));
  CHECK(compute.back().algorithm == OuterProductAlgorithm::allgather);
  // Products as dear as moving bytes: generalized Rabenseifner beats
  // allgather (P products per element) and allreduce (twice the bytes).
  const auto balanced = predict_outer_products(8, 2000, 2000, 8, costs(1e-6, 1e-10, 1e-10));
  CHECK(balanced.front().algorithm == OuterProductAlgorithm::generalized_rabenseifner);
  // Cheap products, dear bytes: gathering the vectors moves the least.
  const auto network = predict_outer_products(8, 2000, 2000, 8, costs(1e-5, 1e-8, 1e-12));
  CHECK(network.front().algorithm == OuterProductAlgorithm::allgather);
  // Latency, a matrix 32 times the vectors: one small allgather wins.
  const auto latency = predict_outer_products(8, 64, 64, 8, costs(1e-5, 1e-9, 1e-11));
  CHECK(latency.front().algorithm == OuterProductAlgorithm::allgather);
}

TEST_CASE("the local kernel equals a direct sum, from any element range, integers wrapping") {
  const std::size_t rows = 5, cols = 7, count = 3;
  std::vector<std::int8_t> pairs(count * (rows + cols));
  for (std::size_t i = 0; i < pairs.size(); ++i) pairs[i] = static_cast<std::int8_t>(static_cast<int>(i * 37 % 251) - 125);
  for (std::size_t begin : {0, 3, 7, 20})
    for (std::size_t end : {begin, begin + 1, std::size_t{35}}) {
      std::vector<std::int8_t> out(end - begin, 99);
      kernels::outer_product_sum(Datatype::int8, {pairs.data(), count, rows, cols}, begin, end, out.data());
      for (std::size_t e = begin; e < end; ++e) {
        unsigned sum = 0;
        for (std::size_t k = 0; k < count; ++k)
          sum += static_cast<unsigned>(pairs[k * (rows + cols) + e / cols]) *
                 static_cast<unsigned>(pairs[k * (rows + cols) + rows + e % cols]);
        CHECK(out[e - begin] == static_cast<std::int8_t>(sum));
      }
    }
}

TEST_CASE("auto = the model's first choice for the default profile; cheap at N = M = 8000") {
  using earlybird::config::default_outer_product_algorithm;
  for (bool direct : {true, false})
    for (int ranks : {2, 5, 64, 1000})
      for (std::size_t n : {std::size_t{1}, std::size_t{100}, std::size_t{3000}}) {
        const auto& profile = config::machine_profile();
        const auto ranked = predict_outer_products(std::min(ranks, config::kModelRanks), n, n, 8,
                                                   direct ? profile.node : profile.network);
        CHECK(default_outer_product_algorithm(ranks, n, n, 8, direct) == ranked.front().algorithm);
      }
  const auto start = std::chrono::steady_clock::now();
  (void)default_outer_product_algorithm(64, 8000, 8000, 4, false);
  MESSAGE("auto for P = 64, 8000 x 8000: ",
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), " s");
}
