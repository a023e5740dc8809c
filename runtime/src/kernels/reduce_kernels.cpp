#include "reduce_kernels.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace earlybird::kernels {
namespace {

template <class T, class F>
void apply(void* dst, const void* src, std::size_t n, F f) {
  T* __restrict d = static_cast<T*>(dst);
  const T* __restrict s = static_cast<const T*>(src);
  for (std::size_t i = 0; i < n; ++i) d[i] = f(d[i], s[i]);
}

template <class T>
void reduce_arith(Op op, void* dst, const void* src, std::size_t n) {
  switch (op) {
    case Op::sum: return apply<T>(dst, src, n, [](T a, T b) { return static_cast<T>(a + b); });
    case Op::prod: return apply<T>(dst, src, n, [](T a, T b) { return static_cast<T>(a * b); });
    case Op::min: return apply<T>(dst, src, n, [](T a, T b) { return b < a ? b : a; });
    case Op::max: return apply<T>(dst, src, n, [](T a, T b) { return a < b ? b : a; });
    default: break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case Op::land: return apply<T>(dst, src, n, [](T a, T b) { return static_cast<T>(a && b); });
      case Op::lor: return apply<T>(dst, src, n, [](T a, T b) { return static_cast<T>(a || b); });
      case Op::lxor: return apply<T>(dst, src, n, [](T a, T b) { return static_cast<T>(!a != !b); });
      case Op::band: return apply<T>(dst, src, n, [](T a, T b) { return static_cast<T>(a & b); });
      case Op::bor: return apply<T>(dst, src, n, [](T a, T b) { return static_cast<T>(a | b); });
      case Op::bxor: return apply<T>(dst, src, n, [](T a, T b) { return static_cast<T>(a ^ b); });
      default: break;
    }
  }
  throw std::invalid_argument(std::string("reduce: operator ") + to_string(op) +
                              " is not defined for this type");
}

// Sums of signed integers wrap (as MPI implementations do in practice) instead
// of being undefined behaviour: compute them in the unsigned type.
// Types narrower than int promote to int, so compute those in unsigned int.
template <class T>
void reduce_signed(Op op, void* dst, const void* src, std::size_t n) {
  using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
  if (op == Op::sum) return apply<T>(dst, src, n, [](T a, T b) { return static_cast<T>(static_cast<U>(a) + static_cast<U>(b)); });
  if (op == Op::prod) return apply<T>(dst, src, n, [](T a, T b) { return static_cast<T>(static_cast<U>(a) * static_cast<U>(b)); });
  reduce_arith<T>(op, dst, src, n);
}

// Unsigned types narrower than int promote to int: a product can overflow int.
template <class T>
void reduce_unsigned(Op op, void* dst, const void* src, std::size_t n) {
  if (op == Op::prod && sizeof(T) < sizeof(unsigned))
    return apply<T>(dst, src, n, [](T a, T b) { return static_cast<T>(static_cast<unsigned>(a) * static_cast<unsigned>(b)); });
  reduce_arith<T>(op, dst, src, n);
}

}  // namespace

void reduce(Datatype type, Op op, void* dst, const void* src, std::size_t n) {
  switch (type) {
    case Datatype::int8: return reduce_signed<std::int8_t>(op, dst, src, n);
    case Datatype::int16: return reduce_signed<std::int16_t>(op, dst, src, n);
    case Datatype::int32: return reduce_signed<std::int32_t>(op, dst, src, n);
    case Datatype::int64: return reduce_signed<std::int64_t>(op, dst, src, n);
    case Datatype::uint8: return reduce_unsigned<std::uint8_t>(op, dst, src, n);
    case Datatype::uint16: return reduce_unsigned<std::uint16_t>(op, dst, src, n);
    case Datatype::uint32: return reduce_unsigned<std::uint32_t>(op, dst, src, n);
    case Datatype::uint64: return reduce_unsigned<std::uint64_t>(op, dst, src, n);
    case Datatype::float32: return reduce_arith<float>(op, dst, src, n);
    case Datatype::float64: return reduce_arith<double>(op, dst, src, n);
  }
}

}  // namespace earlybird::kernels
