// Sim tier: Communicator::tune for P in {1,2,3,4}: every collective tuned at
// several sizes with a report every rank shares and `auto` calls right
// after; the pin decides what `auto` runs for its class and nowhere else;
// bad requests refused with the rank and the cause; with SimOptions::tune,
// the first `auto` call of each class tunes it.
#include <doctest/doctest.h>

#include "../common/tune_cases.hpp"
#include "sim_support.hpp"

using namespace earlybird;
using earlybird::testing::Failures;
using earlybird::testing::RankCheck;

namespace {

constexpr int kRanks[] = {1, 2, 3, 4};

template <class Case>
void on_every_world(const char* what, Case check_case, SimOptions options = {}) {
  for (int p : kRanks) {
    CAPTURE(p);
    SimWorld world(p, options);
    Failures failures;
    earlybird::testing::run_bounded(world, failures, what, [&](int rank, Communicator& comm) {
      RankCheck check(failures, rank);
      check_case(comm, check);
    });
    failures.report();
  }
}

}  // namespace

TEST_CASE("tune: every collective, a shared report, auto right after") {
  for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{300}, std::size_t{70000}})
    on_every_world("tune each collective", [count](Communicator& comm, RankCheck& check) {
      earlybird::testing::check_tune_each_collective(comm, check, count);
    });
}

TEST_CASE("tune: the pin decides auto for its class only") {
  on_every_world("tune pins", [](Communicator& comm, RankCheck& check) {
    earlybird::testing::check_tune_pins_the_class(comm, check);
  });
}

TEST_CASE("tune: bad requests refused, naming the rank and the cause") {
  on_every_world("tune refusals", [](Communicator& comm, RankCheck& check) {
    earlybird::testing::check_tune_refuses_bad_input(comm, check);
  });
}

TEST_CASE("tune on first use: one tune per class, before its first auto call") {
  SimOptions options;
  options.tune = true;
  options.tune_candidates = 2;
  options.tune_budget = std::chrono::milliseconds(5);
  on_every_world("tune on first use", [](Communicator& comm, RankCheck& check) {
    earlybird::testing::check_tune_on_first_use(comm, check);
  }, options);
}
