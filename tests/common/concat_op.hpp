// A non-commutative, associative reduction for tests: decimal concatenation.
// Each rank contributes one digit d in 1..9 per element and
//   a (op) b = a * 10^digits(b) + b,
// so the result is the ranks' digits in rank order (P <= 18 fits in int64).
// earlybird's operators are elementwise over basic types, so this is the
// elementwise stand-in for a matrix product (which would need 4-element
// compound elements, i.e. a derived datatype).
#pragma once

#include <earlybird/types.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace earlybird::testing {

inline std::int64_t concat(std::int64_t left, std::int64_t right) {
  std::int64_t scale = 1;
  for (std::int64_t r = right; r > 0; r /= 10) scale *= 10;
  return left * scale + right;
}

inline ReduceOp concatenation() {
  return ReduceOp::user<std::int64_t>(
      [](std::span<const std::int64_t> left, std::span<const std::int64_t> right, std::span<std::int64_t> out) {
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = concat(left[i], right[i]);
      },
      /*commutative=*/false, "concatenation");
}

inline std::int64_t digit(int rank, std::size_t index) {
  return 1 + static_cast<std::int64_t>((static_cast<std::size_t>(rank) * 7 + index * 3) % 9);
}

inline std::vector<std::int64_t> digits(int rank, std::size_t count) {
  std::vector<std::int64_t> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = digit(rank, i);
  return v;
}

// The rank-order result for element `index`.
inline std::int64_t ordered_concatenation(int ranks, std::size_t index) {
  std::int64_t acc = digit(0, index);
  for (int r = 1; r < ranks; ++r) acc = concat(acc, digit(r, index));
  return acc;
}

}  // namespace earlybird::testing
