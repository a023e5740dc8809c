// Verifies every allreduce algorithm of the catalogue symbolically for P = 1..64 and large P, many counts and seeds.
#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/partition.hpp>
#include <earlybird/collectives/verify.hpp>

#include "unit_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace earlybird::coll;

namespace {

constexpr std::size_t kElemBytes = 4;

void check_verified(const Schedule& s, std::uint64_t seeds) {
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const VerifyReport report = verify_allreduce(s, {seed});
    CHECK_MESSAGE(report.ok, report.error);
    CHECK(report.steps_run == s.steps().size());
  }
}

// A segment of about a third of a chunk: several segments per chunk.
std::size_t third_of_chunk(std::size_t count, int p) {
  return std::max<std::size_t>(1, max_chunk(count, p) / 3);
}

}  // namespace

TEST_CASE("every catalogue algorithm, P = 1..64, counts {0, 1, P-1, P, P+1, 1000, 10007}, 3 seeds") {
  for (const Algorithm& algorithm : allreduce_algorithms()) {
    for (int p = 1; p <= 64; ++p) {
      for (std::size_t count : test::vector_counts(p)) {
        CAPTURE(algorithm.name);
        CAPTURE(p);
        CAPTURE(count);
        check_verified(algorithm.make(p, count, {}, kElemBytes), 3);
      }
    }
  }
}

TEST_CASE("segmented ring with several segments per chunk, P = 1..64") {
  for (int p = 1; p <= 64; ++p) {
    for (std::size_t count : {static_cast<std::size_t>(3 * p + 1), std::size_t{1000}, std::size_t{10007}}) {
      const std::size_t segment = third_of_chunk(count, p);
      CAPTURE(p);
      CAPTURE(count);
      CAPTURE(segment);
      check_verified(allreduce_segmented_ring(p, count, segment), 3);
    }
  }
}

TEST_CASE("large P: every catalogue algorithm for P in {100, 127, 128}, counts {0, 1, P+1}") {
  for (const Algorithm& algorithm : allreduce_algorithms()) {
    for (int p : {100, 127, 128}) {
      for (std::size_t count : {std::size_t{0}, std::size_t{1}, static_cast<std::size_t>(p) + 1}) {
        CAPTURE(algorithm.name);
        CAPTURE(p);
        CAPTURE(count);
        check_verified(algorithm.make(p, count, {}, kElemBytes), 1);
      }
    }
  }
}

TEST_CASE("large P: segmented ring with several segments per chunk, P in {100, 127, 128}") {
  for (int p : {100, 127, 128}) {
    const std::size_t count = 10 * static_cast<std::size_t>(p) + 3;
    CAPTURE(p);
    check_verified(allreduce_segmented_ring(p, count, 3), 1);
  }
}

// Building a ring schedule for P = 1024 (4 million steps) takes most of this
// file's time, so at P >= 1000 the segmented ring is left out: with count P+1
// and its default segment it has one segment per chunk, the ring's schedule.
TEST_CASE("large P: ring and recursive doubling for P in {1000, 1024}, counts {0, 1, P+1}") {
  for (int p : {1000, 1024}) {
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, static_cast<std::size_t>(p) + 1}) {
      CAPTURE(p);
      CAPTURE(count);
      check_verified(allreduce_recursive_doubling(p, count), 1);
      check_verified(allreduce_ring(p, count), 1);
    }
  }
}
