// eb-bench pap, inputs: reproducible random vectors with their exact sum, and
// each rank's emulated compute time, both drawn from streams named by the
// run's seed and (mode, size, delay, iteration).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <random>

#include "collective_table.hpp"
#include "pap_config.hpp"

namespace earlybird::bench::pap {

// An engine for one stream, named by the run's seed and a few numbers.
std::mt19937_64 engine_for(std::uint64_t seed, std::initializer_list<std::uint64_t> stream);

// Allreduce buffers of `count` floats: input, output and the oracle
// (reference). Allocated once per size and refilled in place, so every call
// sees the same addresses, as in an application that reuses its buffers.
Buffers make_pap_buffers(std::size_t count, int rank, int ranks);

// This rank's input (small integers 0..15 held in floats: every summation
// order gives the exact sum) and, as reference, the exact result every rank
// expects: the sum of every rank's generated values, regenerated locally.
void refill(Buffers& data, std::uint64_t seed, std::uint64_t iteration_key, int rank, int ranks);

// This rank's base_r in milliseconds (it sleeps base_r twice, edge(0.5) between).
double half_phase_ms(Mode mode, double max_delay_ms, int rank, std::mt19937_64& delays);

// A number naming (mode, size, delay, iteration) for the random streams.
std::uint64_t iteration_key(std::size_t mode, std::size_t size, std::size_t delay, int iteration);

}  // namespace earlybird::bench::pap
