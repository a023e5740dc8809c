// Reduction kernels: every basic type × every operator against a scalar
// reference, including wrap-around of integer sums and products, lengths that
// are not multiples of a vector width, and rejection of operators MPI does not
// define for floating point.
#include <doctest/doctest.h>

#include "../common/oracle.hpp"
#include "base/reduce_kernels.hpp"

#include <cstdint>
#include <limits>
#include <vector>

using namespace earlybird;
using earlybird::testing::apply_op;

namespace {

constexpr Op kAllOps[] = {Op::sum, Op::prod, Op::min, Op::max, Op::land, Op::lor, Op::lxor, Op::band, Op::bor, Op::bxor};

// Values that exercise signs, zero, extremes and wrap-around.
template <class T>
std::vector<T> sample(std::size_t n, unsigned seed) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned k = static_cast<unsigned>(i) * 2654435761u + seed * 40503u;
    switch (k % 7) {
      case 0: v[i] = T{0}; break;
      case 1: v[i] = std::numeric_limits<T>::max(); break;
      case 2: v[i] = std::numeric_limits<T>::lowest(); break;
      case 3: v[i] = static_cast<T>(1); break;
      default: v[i] = static_cast<T>(static_cast<int>(k % 201) - (std::numeric_limits<T>::is_signed ? 100 : 0));
    }
  }
  return v;
}

template <class T>
void check_type() {
  for (Op op : kAllOps) {
    CAPTURE(to_string(datatype_of<T>()));
    CAPTURE(to_string(op));
    if (!op_supports(op, datatype_of<T>())) {
      std::vector<T> a(3), b(3);
      CHECK_THROWS(kernels::reduce(datatype_of<T>(), op, a.data(), a.data(), b.data(), 3));
      continue;
    }
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{1001}}) {
      const std::vector<T> left = sample<T>(n, 1), right = sample<T>(n, 2);
      std::vector<T> expected(n);
      for (std::size_t i = 0; i < n; ++i) expected[i] = apply_op(op, left[i], right[i]);
      // The shapes the precondition allows: separate destination, and a
      // destination that is the left or the right operand or both.
      std::vector<T> separate(n), as_left = left, as_right = right, as_both = left;
      kernels::reduce(datatype_of<T>(), op, separate.data(), left.data(), right.data(), n);
      kernels::reduce(datatype_of<T>(), op, as_left.data(), as_left.data(), right.data(), n);
      kernels::reduce(datatype_of<T>(), op, as_right.data(), left.data(), as_right.data(), n);
      kernels::reduce(datatype_of<T>(), op, as_both.data(), as_both.data(), as_both.data(), n);
      std::vector<T> expected_self(n);
      for (std::size_t i = 0; i < n; ++i) expected_self[i] = apply_op(op, left[i], left[i]);
      CHECK(separate == expected);
      CHECK(as_left == expected);
      CHECK(as_right == expected);
      CHECK(as_both == expected_self);
    }
  }
}

}  // namespace

TEST_CASE("int8") { check_type<std::int8_t>(); }
TEST_CASE("int16") { check_type<std::int16_t>(); }
TEST_CASE("int32") { check_type<std::int32_t>(); }
TEST_CASE("int64") { check_type<std::int64_t>(); }
TEST_CASE("uint8") { check_type<std::uint8_t>(); }
TEST_CASE("uint16") { check_type<std::uint16_t>(); }
TEST_CASE("uint32") { check_type<std::uint32_t>(); }
TEST_CASE("uint64") { check_type<std::uint64_t>(); }
TEST_CASE("float32") { check_type<float>(); }
TEST_CASE("float64") { check_type<double>(); }

TEST_CASE("type sizes and operator support follow MPI") {
  CHECK(size_of(Datatype::int8) == 1);
  CHECK(size_of(Datatype::uint16) == 2);
  CHECK(size_of(Datatype::float32) == 4);
  CHECK(size_of(Datatype::int64) == 8);
  CHECK(op_supports(Op::sum, Datatype::float64));
  CHECK_FALSE(op_supports(Op::bxor, Datatype::float32));
  CHECK_FALSE(op_supports(Op::land, Datatype::float64));
  CHECK(op_supports(Op::land, Datatype::uint8));
}
