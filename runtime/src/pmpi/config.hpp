// Config: what the PMPI library reads from the environment at MPI_Init
// (README, "PMPI library"): the algorithm per collective, the segment size,
// the size below which calls pass through, EARLYBIRD_DISABLE and
// EARLYBIRD_VERBOSE.
#pragma once

#include <earlybird/collectives/catalogue.hpp>

#include <array>
#include <cstddef>
#include <string>

namespace earlybird::pmpi {

// Calls whose message is smaller than this pass through: earlybird's
// thread hand-offs cost ~6 µs, and it loses to Open MPI below ~32 KiB on
// the 2-core test machine (docs/benchmarks.md).
constexpr std::size_t kDefaultMinBytes = 32 * 1024;

struct Config {
  bool disabled = false;
  bool verbose = false;
  std::size_t min_bytes = kDefaultMinBytes;
  std::size_t segment_bytes = 0;  // 0: each algorithm's default
  // Per coll::Collective; empty: earlybird chooses by size ("auto").
  std::array<std::string, 5> algorithm;

  const std::string& algorithm_for(coll::Collective collective) const {
    return algorithm[static_cast<std::size_t>(collective)];
  }
};

// EARLYBIRD_DISABLE is set (to anything but 0); read before MPI_Init, which
// then asks MPI for exactly the program's thread level.
bool disabled_by_environment();

// Reads the environment. Throws earlybird::Error naming the variable and the
// accepted values when one is malformed or names no algorithm.
Config config_from_environment();

// "EARLYBIRD_ALLREDUCE", ... : the variable that picks `collective`'s algorithm.
const char* algorithm_variable(coll::Collective collective);

}  // namespace earlybird::pmpi
