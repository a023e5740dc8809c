// DSOP's names, the split of G among ranks, and the model's predictions
// (outer_products.hpp).
#include <earlybird/collectives/outer_products.hpp>

#include <algorithm>
#include <array>

namespace earlybird::coll {
namespace {

constexpr std::array kAlgorithms = {OuterProductAlgorithm::allgather, OuterProductAlgorithm::allreduce,
                                    OuterProductAlgorithm::allreduce_ring,
                                    OuterProductAlgorithm::generalized_rabenseifner};

// The catalogue's fastest time for `collective` over `count` elements (0 when
// nothing moves).
double fastest(Collective collective, int ranks, std::size_t count, std::size_t elem_bytes, const LevelCosts& costs) {
  if (count == 0 || ranks <= 1) return 0;
  const auto ranked = predict_all(collective, ranks, count, elem_bytes, true, costs);
  return ranked.empty() ? 0 : ranked.front().seconds;
}

// Two stages (compute a part, then allreduce it) over `parts` equal parts:
// the first part's products, then the slower stage once per remaining part,
// then the last part's ring.
double pipelined(double compute, double communicate, std::size_t parts) {
  if (parts == 0) return 0;
  const double c = compute / static_cast<double>(parts), r = communicate / static_cast<double>(parts);
  return c + static_cast<double>(parts - 1) * std::max(c, r) + r;
}

}  // namespace

std::span<const OuterProductAlgorithm> outer_product_algorithms() { return kAlgorithms; }

std::string_view to_string(OuterProductAlgorithm algorithm) {
  switch (algorithm) {
    case OuterProductAlgorithm::allgather: return "allgather";
    case OuterProductAlgorithm::allreduce: return "allreduce";
    case OuterProductAlgorithm::allreduce_ring: return "allreduce_ring";
    case OuterProductAlgorithm::generalized_rabenseifner: return "generalized_rabenseifner";
  }
  return "?";
}

std::optional<OuterProductAlgorithm> find_outer_product_algorithm(std::string_view name) {
  for (OuterProductAlgorithm a : kAlgorithms)
    if (to_string(a) == name) return a;
  return std::nullopt;
}

std::string outer_product_algorithm_names() {
  std::string names;
  for (OuterProductAlgorithm a : kAlgorithms) names += (names.empty() ? "" : ", ") + std::string(to_string(a));
  return names;
}

ElementBlocks element_blocks(int ranks, std::size_t elements) {
  const auto p = static_cast<std::size_t>(std::max(ranks, 1));
  return {elements / p, elements / p * p};
}

std::vector<std::size_t> ring_row_parts(std::size_t rows, std::size_t cols) {
  if (rows * cols == 0) return {0};
  const std::size_t parts = std::min(rows, kRingParts);
  std::vector<std::size_t> counts;
  for (std::size_t k = 0; k < parts; ++k) counts.push_back((rows / parts + (k < rows % parts ? 1 : 0)) * cols);
  return counts;
}

std::vector<OuterProductPrediction> predict_outer_products(int ranks, std::size_t rows, std::size_t cols,
                                                           std::size_t elem_bytes, const LevelCosts& costs) {
  const std::size_t elements = rows * cols;
  const double one_product =
      static_cast<double>(elements * elem_bytes) * costs.model_for(elements * elem_bytes, ranks).gamma;
  const double pair_gather = fastest(Collective::allgather, ranks, rows + cols, elem_bytes, costs);
  const double products_all = static_cast<double>(ranks) * one_product;
  const std::size_t parts = ring_row_parts(rows, cols).size();
  double ring = 0;
  if (elements > 0 && ranks > 1)
    if (const Algorithm* a = find_algorithm(Collective::allreduce, "ring"))
      ring = static_cast<double>(parts) * predict(*a, ranks, elements / std::max<std::size_t>(parts, 1), elem_bytes, costs);
  const std::size_t block = element_blocks(ranks, elements).block;

  std::vector<OuterProductPrediction> predictions;
  for (OuterProductAlgorithm a : kAlgorithms) {
    double t = 0;
    switch (a) {
      case OuterProductAlgorithm::allgather: t = pair_gather + products_all; break;
      case OuterProductAlgorithm::allreduce:
        t = one_product + fastest(Collective::allreduce, ranks, elements, elem_bytes, costs);
        break;
      case OuterProductAlgorithm::allreduce_ring: t = pipelined(one_product, ring, parts); break;
      case OuterProductAlgorithm::generalized_rabenseifner:
        t = pair_gather + one_product + fastest(Collective::allgather, ranks, block, elem_bytes, costs);
        break;
    }
    predictions.push_back({a, t});
  }
  std::stable_sort(predictions.begin(), predictions.end(),
                   [](const auto& x, const auto& y) { return x.seconds < y.seconds; });
  return predictions;
}

}  // namespace earlybird::coll
