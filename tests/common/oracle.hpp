// Exact oracle for allreduce tests: deterministic inputs per (rank, index, op)
// chosen so every result is exactly representable (small integers, products
// of ones and twos), and the expected result folded with a scalar operator
// written independently of the runtime's kernels.
#pragma once

#include <earlybird/types.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace earlybird::testing {

template <class T>
T input_value(int rank, std::size_t i, Op op) {
  const auto r = static_cast<long long>(rank);
  const auto k = static_cast<long long>(i % 100003);
  switch (op) {
    case Op::sum: return static_cast<T>((r * 7 + k * 3) % 11 - (std::is_signed_v<T> ? 5 : 0));
    case Op::prod: return static_cast<T>((r + k) % 3 == 0 ? 2 : 1);
    case Op::min:
    case Op::max: return static_cast<T>((r * 31 + k * 17) % 101 - (std::is_signed_v<T> ? 50 : 0));
    case Op::land:
    case Op::lor:
    case Op::lxor: return static_cast<T>((r + 2 * k) % 3 == 0 ? 0 : (r % 2) + 1);
    case Op::band:
    case Op::bor:
    case Op::bxor: return static_cast<T>((r * 13 + k * 7) & 0x7f);
  }
  return T{};
}

template <class T>
T apply_op(Op op, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case Op::sum: return a + b;
      case Op::prod: return a * b;
      case Op::min: return a < b ? a : b;
      case Op::max: return a > b ? a : b;
      default: return T{};
    }
  } else {
    using W = std::conditional_t<std::is_signed_v<T>, long long, unsigned long long>;
    const W x = a, y = b;
    switch (op) {
      case Op::sum: return static_cast<T>(static_cast<unsigned long long>(x) + static_cast<unsigned long long>(y));
      case Op::prod: return static_cast<T>(static_cast<unsigned long long>(x) * static_cast<unsigned long long>(y));
      case Op::min: return x < y ? a : b;
      case Op::max: return x > y ? a : b;
      case Op::land: return static_cast<T>((x != 0) && (y != 0));
      case Op::lor: return static_cast<T>((x != 0) || (y != 0));
      case Op::lxor: return static_cast<T>((x != 0) != (y != 0));
      case Op::band: return static_cast<T>(x & y);
      case Op::bor: return static_cast<T>(x | y);
      case Op::bxor: return static_cast<T>(x ^ y);
    }
    return T{};
  }
}

template <class T>
T expected_value(int ranks, std::size_t i, Op op) {
  T acc = input_value<T>(0, i, op);
  for (int r = 1; r < ranks; ++r) acc = apply_op(op, acc, input_value<T>(r, i, op));
  return acc;
}

template <class T>
std::vector<T> make_input(int rank, std::size_t count, Op op) {
  std::vector<T> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = input_value<T>(rank, i, op);
  return v;
}

// Number of elements of `got` that differ from the expected allreduce result.
template <class T>
std::size_t count_wrong(const std::vector<T>& got, int ranks, Op op) {
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != expected_value<T>(ranks, i, op)) ++wrong;
  return wrong;
}

}  // namespace earlybird::testing
