// Communicator::tune: `auto`'s choice for one size class measured on the
// running communicator instead of taken from the cost model alone. What it
// is given and what it reports.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace earlybird {

struct TuneOptions {
  // The catalogue entries to measure (each at the segment the model ranked
  // it with, else its default), or
  // empty: the cost model's `candidates` fastest for the class, each at the
  // segment the model found fastest for it.
  std::vector<std::string> algorithms;
  // How many of the model's ranking to measure when `algorithms` is empty;
  // 0: every entry the model ranks.
  std::size_t candidates = 4;
  // Roughly how long the timed calls take altogether: every rank agrees on
  // the number of rounds from the first timed call of each candidate, at
  // least 5 and at most 400.
  std::chrono::milliseconds budget{100};
  // The trial calls are blocking ones (CollectiveOptions::blocking), as the
  // PMPI library's are; false: futures waited for at once.
  bool blocking = false;
};

struct TuneTrial {
  std::string algorithm;
  std::size_t segment_bytes = 0;  // 0: the entry's default
  double predicted_s = 0;         // the model's time; 0 for an entry it did not rank
  double measured_s = 0;          // median over rounds of the slowest rank's time per call
};

struct TuneReport {
  std::string collective;      // "allreduce", ...
  std::size_t bytes = 0;       // of the tuned call (per block for allgather, reduce_scatter)
  std::size_t class_bytes = 0; // the upper bound of the class the choice is pinned for
  std::string chosen;          // the fastest trial: what `auto` now runs for the class
  std::size_t chosen_segment_bytes = 0;
  int rounds = 0;              // timed calls per candidate
  std::vector<TuneTrial> trials;  // in the model's order (or `algorithms`' order)
};

// One line: "tune allreduce 1048576 B (class up to 1048576 B): chose ring
// from ring 812.4 us (model 790.1), ...; 11 rounds".
std::string summary(const TuneReport& report);

}  // namespace earlybird
