// Relative comparison of doubles in tests. doctest::Approx(x) passes when
// |a - x| < epsilon * (1 + max(|a|, |x|)): the 1 makes its default epsilon
// (~1.2e-5) an absolute tolerance of ~1.2e-5 for small values, which any time
// in seconds of a microsecond collective passes (0 == Approx(1.25e-6)).
// relative(x) drops the 1: the tolerance is epsilon times the larger value.
// (Not for an expected 0: nothing is within a relative tolerance of 0.)
#pragma once

#include <doctest/doctest.h>

namespace earlybird::testing {

inline doctest::Approx relative(double expected, double epsilon = 1e-6) {
  return doctest::Approx(expected).epsilon(epsilon).scale(0);
}

}  // namespace earlybird::testing
