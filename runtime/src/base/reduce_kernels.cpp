#include "reduce_kernels.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace earlybird::kernels {
namespace {

// Operands describe where a kernel reads and writes.
struct Operands {
  void* dst;
  const void* left;
  const void* right;
  std::size_t n;
};

template <class T, class F>
void onto_itself(T* __restrict d, std::size_t n, F f) {
  for (std::size_t i = 0; i < n; ++i) d[i] = f(d[i], d[i]);
}

template <class T, class F>
void into_left(T* __restrict d, const T* __restrict b, std::size_t n, F f) {
  for (std::size_t i = 0; i < n; ++i) d[i] = f(d[i], b[i]);
}

template <class T, class F>
void into_right(T* __restrict d, const T* __restrict a, std::size_t n, F f) {
  for (std::size_t i = 0; i < n; ++i) d[i] = f(a[i], d[i]);
}

template <class T, class F>
void apart(T* __restrict d, const T* __restrict a, const T* __restrict b, std::size_t n, F f) {
  for (std::size_t i = 0; i < n; ++i) d[i] = f(a[i], b[i]);
}

// One loop per way dst may meet the operands (equal to both, to left, to
// right, apart from both: the only cases the precondition allows), each over
// restrict pointers, so the compiler vectorises it without a run-time
// overlap check (a check that, failing for dst == left, ran every in-place
// reduction scalar).
template <class T, class F>
void apply(const Operands& o, F f) {
  T* const d = static_cast<T*>(o.dst);
  const T* const a = static_cast<const T*>(o.left);
  const T* const b = static_cast<const T*>(o.right);
  if (d == a && d == b) return onto_itself<T>(d, o.n, f);
  if (d == a) return into_left<T>(d, b, o.n, f);
  if (d == b) return into_right<T>(d, a, o.n, f);
  apart<T>(d, a, b, o.n, f);
}

template <class T>
void reduce_arith(Op op, const Operands& o) {
  switch (op) {
    case Op::sum: return apply<T>(o, [](T a, T b) { return static_cast<T>(a + b); });
    case Op::prod: return apply<T>(o, [](T a, T b) { return static_cast<T>(a * b); });
    case Op::min: return apply<T>(o, [](T a, T b) { return b < a ? b : a; });
    case Op::max: return apply<T>(o, [](T a, T b) { return a < b ? b : a; });
    default: break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case Op::land: return apply<T>(o, [](T a, T b) { return static_cast<T>(a && b); });
      case Op::lor: return apply<T>(o, [](T a, T b) { return static_cast<T>(a || b); });
      case Op::lxor: return apply<T>(o, [](T a, T b) { return static_cast<T>(!a != !b); });
      case Op::band: return apply<T>(o, [](T a, T b) { return static_cast<T>(a & b); });
      case Op::bor: return apply<T>(o, [](T a, T b) { return static_cast<T>(a | b); });
      case Op::bxor: return apply<T>(o, [](T a, T b) { return static_cast<T>(a ^ b); });
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
void reduce_signed(Op op, const Operands& o) {
  using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
  if (op == Op::sum) return apply<T>(o, [](T a, T b) { return static_cast<T>(static_cast<U>(a) + static_cast<U>(b)); });
  if (op == Op::prod) return apply<T>(o, [](T a, T b) { return static_cast<T>(static_cast<U>(a) * static_cast<U>(b)); });
  reduce_arith<T>(op, o);
}

// Unsigned types narrower than int promote to int: a product can overflow int.
template <class T>
void reduce_unsigned(Op op, const Operands& o) {
  if (op == Op::prod && sizeof(T) < sizeof(unsigned))
    return apply<T>(o, [](T a, T b) { return static_cast<T>(static_cast<unsigned>(a) * static_cast<unsigned>(b)); });
  reduce_arith<T>(op, o);
}

}  // namespace

void reduce(Datatype type, Op op, void* dst, const void* left, const void* right, std::size_t n) {
  const Operands o{dst, left, right, n};
  switch (type) {
    case Datatype::int8: return reduce_signed<std::int8_t>(op, o);
    case Datatype::int16: return reduce_signed<std::int16_t>(op, o);
    case Datatype::int32: return reduce_signed<std::int32_t>(op, o);
    case Datatype::int64: return reduce_signed<std::int64_t>(op, o);
    case Datatype::uint8: return reduce_unsigned<std::uint8_t>(op, o);
    case Datatype::uint16: return reduce_unsigned<std::uint16_t>(op, o);
    case Datatype::uint32: return reduce_unsigned<std::uint32_t>(op, o);
    case Datatype::uint64: return reduce_unsigned<std::uint64_t>(op, o);
    case Datatype::float32: return reduce_arith<float>(op, o);
    case Datatype::float64: return reduce_arith<double>(op, o);
  }
}

}  // namespace earlybird::kernels
