// The machine as the cost model sees it, measured by the library itself:
// the memory rates every rank gets at once (eb-bench's calibration and its
// memory-traffic bound use them too), and the start-up probe that gives
// `auto` a profile when no EARLYBIRD_PROFILE names a calibrated one
// (docs/algorithms.md, "The start-up probe").
#pragma once

#include <earlybird/collectives/predict.hpp>

#include <mpi.h>

#include <cstddef>
#include <optional>

namespace earlybird {

// Seconds per byte, the slowest rank's.
struct MemoryRates {
  double copy_s_per_byte = 0;    // b = a (memcpy)
  double reduce_s_per_byte = 0;  // b += a over floats by the runtime's reduction kernel, per byte of b
  double reduce_apart_s_per_byte = 0;  // c = a + b by the same kernel, per byte of c
};

// Every rank of `comm` copies and reduces `bytes` of floats at once, the best
// of `repetitions` per rank; the slowest rank's best. Collective over comm.
MemoryRates measure_memory_rates(MPI_Comm comm, std::size_t bytes, int repetitions);

// Bytes per buffer for a pass of measure_memory_rates that measures memory,
// not a cache: this machine's last-level cache (hwloc), at least `floor`
// (a rank's three buffers then hold three times what the cache can).
std::size_t past_caches_bytes(std::size_t floor);

// The start-up probe, collective over `world`: when `world` spans more than
// one node, `defaults` with the network level's alpha and beta measured by
// MPI ping-pongs between rank 0 and the first rank on another node (half
// the median round trip of 8 bytes; the median extra time of 256 KiB one way,
// per byte) and its gamma, copy and gamma_apart by measure_memory_rates over 2 MiB
// (source "start-up probe"); on one node nothing is measured: none. The node level and
// both levels' per_step and per_call are the runtime's own costs, which only
// `eb-bench calibrate` measures (on a shared window an MPI ping-pong times
// MPI's shared memory, not earlybird's). Every rank returns the same numbers
// (rank 0's round trips, the slowest rank's memory rates).
std::optional<coll::MachineProfile> probe_machine(MPI_Comm world, const coll::MachineProfile& defaults);

}  // namespace earlybird
