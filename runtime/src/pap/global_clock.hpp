// Global time of a communicator: rank 0's steady clock, in microseconds since
// the communicator was created. Each rank converts its own steady clock with
// the offset measured at creation (Transport::clock_offset_ns, Cristian's
// method in rma/mpi_transport.hpp; error at most half the best round trip).
// Arrival estimates, arrival times and the decisions built on them are all in
// this base.
#pragma once

#include "../rma/transport.hpp"

#include <chrono>
#include <cstdint>

namespace earlybird::pap {

using SteadyClock = std::chrono::steady_clock;

inline std::int64_t global_us(const Transport& transport, SteadyClock::time_point local) {
  const std::int64_t local_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(local.time_since_epoch()).count();
  return (local_ns - transport.clock_offset_ns() - transport.clock_origin_ns()) / 1000;
}

inline std::int64_t global_now_us(const Transport& transport) { return global_us(transport, SteadyClock::now()); }

}  // namespace earlybird::pap
