// Test-only: hooks into Builder for the Builder's and the verifier's unit
// tests (tests/unit/test_builder.cpp, test_verify.cpp), which need schedules
// that break the Builder's own rules. Algorithms never include this header;
// it is not part of the public API.
#pragma once

#include <earlybird/collectives/builder.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace earlybird::coll {

// Which hazards become dependencies. Algorithms always get `all`;
// `skip_write_after_read` builds a schedule that lacks its write-after-read
// edges, which the verifier must report as a race.
enum class Hazards : std::uint8_t { all, skip_write_after_read };

struct BuilderTestAccess {
  static Builder builder(std::string algorithm, int ranks, std::size_t count, Hazards hazards) {
    Builder b(std::move(algorithm), ranks, count);
    b.skip_write_after_read_ = hazards == Hazards::skip_write_after_read;
    return b;
  }
  // Makes `step` also depend on `on`, even against program order, so a test
  // can build a cycle. Throws std::logic_error for a step that does not exist.
  static void add_dependency(Builder& b, StepId step, StepId on) { b.add_dependency(step, on); }
};

}  // namespace earlybird::coll
