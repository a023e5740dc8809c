#include "outer_product_kernels.hpp"

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <type_traits>

namespace earlybird::kernels {
namespace {

// The type the arithmetic runs in: unsigned for integers (wrapping, and wide
// enough that narrow types do not promote to a signed int that could overflow).
template <class T>
struct ArithOf {
  using type = T;
};
template <std::integral T>
struct ArithOf<T> {
  using type = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
};
template <class T>
using Arith = typename ArithOf<T>::type;

// One row's piece: out[j - from] for columns [from, to) of row i. The inner
// loop streams the output piece once per pair (it stays in cache).
template <class T>
void row_piece(const T* pairs, const PackedPairs& shape, std::size_t i, std::size_t from, std::size_t to, T* out) {
  using A = Arith<T>;
  const std::size_t width = to - from, stride = shape.rows + shape.cols;
  std::fill(out, out + width, T{});
  for (std::size_t k = 0; k < shape.count; ++k) {
    const T* pair = pairs + k * stride;
    const A a = static_cast<A>(pair[i]);
    const T* b = pair + shape.rows + from;
    for (std::size_t j = 0; j < width; ++j)
      out[j] = static_cast<T>(static_cast<A>(out[j]) + a * static_cast<A>(b[j]));
  }
}

template <class T>
void sum_range(const PackedPairs& shape, std::size_t begin, std::size_t end, void* out) {
  const T* pairs = static_cast<const T*>(shape.data);
  T* dst = static_cast<T*>(out);
  for (std::size_t e = begin; e < end;) {
    const std::size_t i = e / shape.cols, from = e % shape.cols;
    const std::size_t to = std::min(shape.cols, from + (end - e));
    row_piece(pairs, shape, i, from, to, dst + (e - begin));
    e += to - from;
  }
}

}  // namespace

void outer_product_sum(Datatype type, const PackedPairs& pairs, std::size_t begin, std::size_t end, void* out) {
  if (begin >= end || pairs.cols == 0) return;
  switch (type) {
    case Datatype::int8: return sum_range<std::int8_t>(pairs, begin, end, out);
    case Datatype::int16: return sum_range<std::int16_t>(pairs, begin, end, out);
    case Datatype::int32: return sum_range<std::int32_t>(pairs, begin, end, out);
    case Datatype::int64: return sum_range<std::int64_t>(pairs, begin, end, out);
    case Datatype::uint8: return sum_range<std::uint8_t>(pairs, begin, end, out);
    case Datatype::uint16: return sum_range<std::uint16_t>(pairs, begin, end, out);
    case Datatype::uint32: return sum_range<std::uint32_t>(pairs, begin, end, out);
    case Datatype::uint64: return sum_range<std::uint64_t>(pairs, begin, end, out);
    case Datatype::float32: return sum_range<float>(pairs, begin, end, out);
    case Datatype::float64: return sum_range<double>(pairs, begin, end, out);
  }
}

}  // namespace earlybird::kernels
