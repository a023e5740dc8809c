// The step time tau of arrival-ordered algorithms (runtime/src/pap/step_cost):
// the model alpha + (m / P)(beta + gamma), raised to the fastest allreduce seen
// divided by a ring's 2 (P - 1) steps, or fixed by EARLYBIRD_PAP_TAU_US; and
// the per-size-class history of the fastest allreduce.
#include <doctest/doctest.h>

#include "pap/step_cost.hpp"

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

using namespace earlybird::pap;

namespace {

// Sets EARLYBIRD_PAP_TAU_US for one scope (unset at construction and exit).
class FixedTau {
 public:
  explicit FixedTau(const char* value) {
    ::unsetenv(kName);
    if (value) ::setenv(kName, value, 1);
  }
  ~FixedTau() { ::unsetenv(kName); }
  FixedTau(const FixedTau&) = delete;
  FixedTau& operator=(const FixedTau&) = delete;

 private:
  static constexpr const char* kName = "EARLYBIRD_PAP_TAU_US";
};

}  // namespace

TEST_CASE("measured link costs: the fixed alpha, finite positive per-byte costs") {
  const LinkCosts& costs = measured_link_costs();
  CHECK(costs.alpha_us == 5.0);
  CHECK(costs.beta_us_per_byte > 0);
  CHECK(costs.gamma_us_per_byte > 0);
  CHECK(std::isfinite(costs.beta_us_per_byte));
  CHECK(std::isfinite(costs.gamma_us_per_byte));
  CHECK(&measured_link_costs() == &costs);  // measured once per process
}

TEST_CASE("model: no bytes cost alpha per step, a ring 2 (P - 1) steps") {
  FixedTau unset(nullptr);
  const Timing four = timing_for(0, 4);
  CHECK(four.tau_us == doctest::Approx(5.0));
  CHECK(four.ring_us == doctest::Approx(30.0));  // 2 * 3 * 5
  const Timing two = timing_for(0, 2);
  CHECK(two.tau_us == doctest::Approx(5.0));
  CHECK(two.ring_us == doctest::Approx(10.0));  // 2 * 1 * 5
}

TEST_CASE("model: one rank or none still counts one step each way") {
  FixedTau unset(nullptr);
  CHECK(timing_for(0, 1).ring_us == doctest::Approx(10.0));
  CHECK(timing_for(0, 0).ring_us == doctest::Approx(10.0));
  CHECK(timing_for(0, 0).tau_us == doctest::Approx(5.0));
}

TEST_CASE("model: a chunk of m / P bytes moved and reduced") {
  FixedTau unset(nullptr);
  const LinkCosts& c = measured_link_costs();
  const double per_byte = c.beta_us_per_byte + c.gamma_us_per_byte;
  const Timing t = timing_for(1u << 20, 4);
  CHECK(t.tau_us == doctest::Approx(5.0 + 262144.0 * per_byte));
  CHECK(t.ring_us == doctest::Approx(6.0 * (5.0 + 262144.0 * per_byte)));
  // Twice the ranks, half the chunk.
  CHECK(timing_for(1u << 20, 8).tau_us == doctest::Approx(5.0 + 131072.0 * per_byte));
}

TEST_CASE("the fastest allreduce seen raises tau to its share of a ring, never lowers it") {
  FixedTau unset(nullptr);
  SUBCASE("slower than the model: 600 us over 2 * 3 steps") {
    const Timing t = timing_for(0, 4, 600.0);
    CHECK(t.tau_us == doctest::Approx(100.0));
    CHECK(t.ring_us == doctest::Approx(600.0));
  }
  SUBCASE("faster than the model: the model's alpha stays") {
    const Timing t = timing_for(0, 4, 12.0);  // 2 us a step < alpha
    CHECK(t.tau_us == doctest::Approx(5.0));
    CHECK(t.ring_us == doctest::Approx(30.0));
  }
  SUBCASE("two ranks: 2 steps") {
    CHECK(timing_for(0, 2, 300.0).tau_us == doctest::Approx(150.0));
  }
}

TEST_CASE("EARLYBIRD_PAP_TAU_US fixes tau, whatever the size and history") {
  FixedTau fixed("50");
  const Timing t = timing_for(1u << 24, 4, 1e6);
  CHECK(t.tau_us == doctest::Approx(50.0));
  CHECK(t.ring_us == doctest::Approx(300.0));  // 2 * 3 * 50
  CHECK(timing_for(0, 2).ring_us == doctest::Approx(100.0));
}

TEST_CASE("EARLYBIRD_PAP_TAU_US: fractions are read, nonsense and non-positive values fall back to the model") {
  SUBCASE("fraction") {
    FixedTau fixed("2.5");
    CHECK(timing_for(0, 4).tau_us == doctest::Approx(2.5));
  }
  SUBCASE("zero") {
    FixedTau fixed("0");
    CHECK(timing_for(0, 4).tau_us == doctest::Approx(5.0));
  }
  SUBCASE("negative") {
    FixedTau fixed("-7");
    CHECK(timing_for(0, 4).tau_us == doctest::Approx(5.0));
  }
  SUBCASE("not a number") {
    FixedTau fixed("fast");
    CHECK(timing_for(0, 4, 600.0).tau_us == doctest::Approx(100.0));
  }
  SUBCASE("empty") {
    FixedTau fixed("");
    CHECK(timing_for(0, 4).tau_us == doctest::Approx(5.0));
  }
}

TEST_CASE("allreduce history: the fastest per power-of-two size class") {
  AllreduceHistory history;
  CHECK_FALSE(history.fastest_us(1000).has_value());
  history.record(1000, 50.0);
  history.record(600, 70.0);  // same class: 512 <= bytes < 1024
  history.record(700, 40.0);
  history.record(1024, 10.0);  // next class
  CHECK(history.fastest_us(512) == std::optional<double>(40.0));
  CHECK(history.fastest_us(1023) == std::optional<double>(40.0));
  CHECK(history.fastest_us(1024) == std::optional<double>(10.0));
  CHECK(history.fastest_us(2047) == std::optional<double>(10.0));
  CHECK_FALSE(history.fastest_us(2048).has_value());
  CHECK_FALSE(history.fastest_us(511).has_value());
}

TEST_CASE("allreduce history: a slower record does not replace a faster one") {
  AllreduceHistory history;
  history.record(4096, 30.0);
  history.record(4096, 90.0);
  CHECK(history.fastest_us(4096) == std::optional<double>(30.0));
  history.record(5000, 20.0);
  CHECK(history.fastest_us(4096) == std::optional<double>(20.0));
}

TEST_CASE("allreduce history feeds timing_for: 1.2 ms at P = 4 over 6 steps") {
  FixedTau unset(nullptr);
  AllreduceHistory history;
  history.record(0, 1200.0);  // size class of empty messages
  const Timing t = timing_for(0, 4, history.fastest_us(0));
  CHECK(t.tau_us == doctest::Approx(200.0));
  CHECK(t.ring_us == doctest::Approx(1200.0));
}
