// The local work of DSOP (Communicator::sum_outer_products): elements of
// G = sum_k a_k b_k^T for every basic type. Integer sums and products wrap
// (computed in the unsigned type), as the reduction kernels' do.
#pragma once

#include <earlybird/types.hpp>

#include <cstddef>

namespace earlybird::kernels {

// Pairs (a_k, b_k) packed one after another: pair k's a (rows elements) at
// element k x (rows + cols) of `data`, its b (cols elements) right after.
struct PackedPairs {
  const void* data = nullptr;
  std::size_t count = 0;
  std::size_t rows = 0;
  std::size_t cols = 0;
};

// out[e - begin] = sum over the pairs of a_k[e / cols] x b_k[e % cols], for
// the elements e in [begin, end) of the rows x cols matrix, row-major.
void outer_product_sum(Datatype type, const PackedPairs& pairs, std::size_t begin, std::size_t end, void* out);

}  // namespace earlybird::kernels
