// eb-bench pap, configuration (pap_config.hpp).
#include "pap_config.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace earlybird::bench::pap {
namespace {

Mode mode_of(const std::string& name) {
  if (name == "one-late") return Mode::one_late;
  if (name == "rand-late") return Mode::rand_late;
  throw std::invalid_argument("unknown mode: " + name + " (one-late, rand-late)");
}

// --algorithms "all" or a list. The ring is always measured, and first: it is
// the base of every speedup and saved share (cells[0]).
std::vector<std::string> algorithms_of(const std::vector<std::string>& choice, int rank) {
  std::vector<std::string> names = choice == std::vector<std::string>{"all"} ? all_algorithms() : choice;
  const auto ring = std::find(names.begin(), names.end(), kRing);
  if (ring == names.end() && rank == 0) std::printf("# ring added: speedups and saved shares are relative to it\n");
  if (ring != names.end()) names.erase(ring);
  names.insert(names.begin(), kRing);
  return names;
}

}  // namespace

const std::vector<std::string>& all_algorithms() {
  static const std::vector<std::string> names = {
      "ring",          "rabenseifner", "sorted_linear_tree", "pre_reduced_ring",
      "arrival_chain", "arrival_prr",  "arrival_greedy",     "auto_pap", "mpi"};
  return names;
}

const char* to_string(Mode mode) { return mode == Mode::one_late ? "one-late" : "rand-late"; }

PapConfig make_config(const PapOptions& options, int rank) {
  PapConfig c;
  for (const auto& m : options.modes) c.modes.push_back(mode_of(m));
  c.delays_ms = options.delays_ms;
  for (std::size_t bytes : options.sizes) c.counts.push_back(std::max<std::size_t>(1, bytes / sizeof(float)));
  c.algorithms = algorithms_of(options.algorithms, rank);
  c.iterations = options.iterations;
  c.baseline_iterations = options.baseline_iterations;
  c.seed = options.seed;
  c.csv = options.csv;
  c.command_line = options.command_line;
  return c;
}

std::chrono::milliseconds call_timeout(const std::vector<double>& delays_ms) {
  const double longest = delays_ms.empty() ? 0.0 : *std::max_element(delays_ms.begin(), delays_ms.end());
  return std::chrono::milliseconds(static_cast<long long>(3 * longest + 2 * kBaseExtraMs) + 60'000);
}

}  // namespace earlybird::bench::pap
