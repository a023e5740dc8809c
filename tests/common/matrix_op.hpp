// A non-commutative reduction for tests: the product of 2x2 integer matrices
// (stored as 4 consecutive int64 elements per matrix; element counts are
// multiples of 4). The rank-order fold M_0 M_1 ... M_(P-1) is the oracle.
#pragma once

#include <earlybird/types.hpp>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace earlybird::testing {

using Matrix = std::array<std::int64_t, 4>;

inline Matrix multiply(const Matrix& a, const Matrix& b) {
  return {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
          a[2] * b[1] + a[3] * b[3]};
}

// out = left x right, matrix by matrix; out may alias left or right.
inline ReduceOp matrix_product() {
  return ReduceOp::user<std::int64_t>(
      [](std::span<const std::int64_t> left, std::span<const std::int64_t> right, std::span<std::int64_t> out) {
        for (std::size_t m = 0; m + 3 < out.size(); m += 4) {
          const Matrix product = multiply({left[m], left[m + 1], left[m + 2], left[m + 3]},
                                          {right[m], right[m + 1], right[m + 2], right[m + 3]});
          for (std::size_t k = 0; k < 4; ++k) out[m + k] = product[k];
        }
      },
      /*commutative=*/false, "matrix_product");
}

// Unimodular matrices with small entries that do not commute, varied by rank
// and position, so products stay exact and order matters.
inline Matrix matrix_input(int rank, std::size_t index) {
  switch ((static_cast<std::size_t>(rank) + index) % 3) {
    case 0: return {1, 1, 0, 1};
    case 1: return {1, 0, 1, 1};
    default: return {0, 1, -1, 0};
  }
}

inline std::vector<std::int64_t> matrix_inputs(int rank, std::size_t matrices) {
  std::vector<std::int64_t> v;
  for (std::size_t i = 0; i < matrices; ++i)
    for (std::int64_t x : matrix_input(rank, i)) v.push_back(x);
  return v;
}

// The rank-order product for matrix `index` over ranks [first, first + count).
inline Matrix ordered_product(int ranks, std::size_t index) {
  Matrix acc = matrix_input(0, index);
  for (int r = 1; r < ranks; ++r) acc = multiply(acc, matrix_input(r, index));
  return acc;
}

}  // namespace earlybird::testing
