// Arrival patterns for the arrival-pattern-aware (PAP) allreduce tests, shared
// by the sim and MPI tiers: which ranks come late to a collective, and how a
// rank reports its compute phase (phase_begin / edge / phase_end) before it.
// Delays come from a seed, so every rank (thread or process) computes the
// same pattern without communicating, and a failing case can be replayed.
#pragma once

#include <earlybird/communicator.hpp>
#include <earlybird/future.hpp>
#include <earlybird/types.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace earlybird::testing {

// The algorithms under test: the PAP ones and `ring` as the control.
inline const std::vector<std::string>& pap_algorithms() {
  static const std::vector<std::string> names{"sorted_linear_tree", "pre_reduced_ring", "arrival_chain", "arrival_prr",
                                              "arrival_greedy",     "auto_pap",         "ring"};
  return names;
}

enum class Arrival { none, one_late, all_random, all_equal };
inline constexpr int kArrivals = 4;

// How ranks report progress before the collective.
enum class Edges {
  every_rank,   // phase_begin, edge(0.5) half-way, phase_end
  no_rank,      // phase_begin, phase_end, never edge
  some_ranks,   // odd ranks as every_rank; even ranks make no monitoring call
  just_before,  // phase_begin, the whole phase, then edge(0.5) and phase_end
  unmonitored,  // no monitoring call at all (estimates stale or absent)
};
inline constexpr int kEdges = 5;

inline const char* to_string(Arrival a) {
  switch (a) {
    case Arrival::none: return "none";
    case Arrival::one_late: return "one-late";
    case Arrival::all_random: return "all-random";
    case Arrival::all_equal: return "all-equal";
  }
  return "?";
}

inline const char* to_string(Edges e) {
  switch (e) {
    case Edges::every_rank: return "edge-every-rank";
    case Edges::no_rank: return "edge-no-rank";
    case Edges::some_ranks: return "edge-some-ranks";
    case Edges::just_before: return "edge-just-before";
    case Edges::unmonitored: return "unmonitored";
  }
  return "?";
}

// Per-rank delay in milliseconds before the collective: one-late puts a
// random rank 20..50 ms behind, all-random draws 0..30 ms per rank,
// all-equal gives every rank 15 ms.
inline std::vector<int> arrival_delays(Arrival a, int ranks, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int> delays(static_cast<std::size_t>(ranks), 0);
  switch (a) {
    case Arrival::none: break;
    case Arrival::one_late: {
      const int late = std::uniform_int_distribution<int>(0, ranks - 1)(rng);
      delays[static_cast<std::size_t>(late)] = std::uniform_int_distribution<int>(20, 50)(rng);
      break;
    }
    case Arrival::all_random:
      for (int& d : delays) d = std::uniform_int_distribution<int>(0, 30)(rng);
      break;
    case Arrival::all_equal:
      for (int& d : delays) d = 15;
      break;
  }
  return delays;
}

inline void sleep_ms(int ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

inline void reported_phase(Communicator& comm, int delay_ms) {
  comm.phase_begin();
  sleep_ms(delay_ms / 2);
  comm.edge(0.5);
  sleep_ms(delay_ms - delay_ms / 2);
  comm.phase_end();
}

// This rank's compute phase of `delay_ms`, monitored as `edges` says.
inline void compute_phase(Communicator& comm, int delay_ms, Edges edges) {
  switch (edges) {
    case Edges::every_rank: reported_phase(comm, delay_ms); return;
    case Edges::no_rank:
      comm.phase_begin();
      sleep_ms(delay_ms);
      comm.phase_end();
      return;
    case Edges::some_ranks:
      if (comm.rank() % 2 == 1) reported_phase(comm, delay_ms);
      else sleep_ms(delay_ms);
      return;
    case Edges::just_before:
      comm.phase_begin();
      sleep_ms(delay_ms);
      comm.edge(0.5);
      comm.phase_end();
      return;
    case Edges::unmonitored: sleep_ms(delay_ms); return;
  }
}

// One sampled allreduce case.
struct PapCase {
  std::string algorithm;
  std::size_t count = 0;
  bool in_place = false;
  bool use_double = false;  // else int32
  Arrival arrival = Arrival::none;
  Edges edges = Edges::every_rank;
  std::uint32_t seed = 0;
};

inline std::string describe(const PapCase& c, int ranks) {
  return c.algorithm + " count=" + std::to_string(c.count) + (c.use_double ? " double" : " int32") +
         (c.in_place ? " in-place " : " ") + to_string(c.arrival) + " " + to_string(c.edges) +
         " seed=" + std::to_string(c.seed) + " P=" + std::to_string(ranks);
}

// A sample of the cross product for one algorithm: every (arrival, edges)
// pair once; counts, type and in-place rotate with `offset` so different
// algorithms and P cover different combinations.
inline std::vector<PapCase> sample_cases(const std::string& algorithm, const std::vector<std::size_t>& counts,
                                         std::uint32_t offset) {
  std::vector<PapCase> cases;
  for (std::uint32_t i = 0; i < kArrivals * kEdges; ++i) {
    const std::uint32_t v = i + offset;
    PapCase c;
    c.algorithm = algorithm;
    c.arrival = static_cast<Arrival>(i % kArrivals);
    c.edges = static_cast<Edges>(i / kArrivals);
    c.count = counts[v % counts.size()];
    c.use_double = (v / 2) % 2 == 1;
    c.in_place = (v / 3) % 2 == 1;
    c.seed = 1000 * offset + i;
    cases.push_back(c);
  }
  return cases;
}

inline CollectiveOptions named(std::string_view algorithm) {
  CollectiveOptions options;
  options.algorithm = std::string(algorithm);
  return options;
}

// Starts case `c`'s allreduce (Op::sum) of `in` into `out`, or of `in` in place.
template <class T>
Future submit(Communicator& comm, const PapCase& c, std::vector<T>& in, std::vector<T>& out) {
  const CollectiveOptions options = named(c.algorithm);
  if (c.in_place) return comm.allreduce(std::span<T>(in), Op::sum, options);
  return comm.allreduce(std::span<const T>(in), std::span<T>(out), Op::sum, options);
}

// Calls `call` and returns the earlybird::Error's message, "" if nothing was
// thrown (any other exception propagates: edge() must throw Error).
template <class F>
std::string error_from(F call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

inline std::string refusal_problem(const std::string& call, const std::string& error, const char* must_name) {
  if (error.empty()) return call + " was accepted";
  if (error.find(must_name) == std::string::npos) return call + ": message does not name " + must_name + ": " + error;
  return "";
}

// What is wrong with edge()'s input checking on `comm`, which must not have
// begun a phase yet: edge() outside a phase and fractions outside (0, 1] must
// throw Error naming the cause, edge(1.0) must be accepted. Leaves no phase open.
inline std::vector<std::string> edge_input_problems(Communicator& comm) {
  std::vector<std::string> problems;
  auto note = [&](std::string problem) {
    if (!problem.empty()) problems.push_back(std::move(problem));
  };
  note(refusal_problem("edge(0.5) before phase_begin", error_from([&] { comm.edge(0.5); }), "phase_begin"));
  comm.phase_begin();
  for (double f : {0.0, -0.0, -0.25, 1.5, std::numeric_limits<double>::infinity(),
                   std::numeric_limits<double>::quiet_NaN()})
    note(refusal_problem("edge(" + std::to_string(f) + ")", error_from([&] { comm.edge(f); }), "edge"));
  const std::string valid = error_from([&] { comm.edge(1.0); });
  if (!valid.empty()) note("edge(1.0) refused: " + valid);
  comm.phase_end();
  return problems;
}

inline std::string ranks_text(const std::vector<int>& ranks) {
  std::string text = "{";
  for (std::size_t i = 0; i < ranks.size(); ++i) text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text + "}";
}

// What is wrong with a straggler report that should name exactly `late`
// after waiting at least `threshold` in an allreduce.
inline std::vector<std::string> straggler_problems(const std::optional<StragglerReport>& report,
                                                   const std::vector<int>& late, std::chrono::milliseconds threshold) {
  if (!report) return {"no straggler report"};
  std::vector<std::string> problems;
  if (report->not_arrived != late)
    problems.push_back("not_arrived = " + ranks_text(report->not_arrived) + ", expected " + ranks_text(late));
  if (report->waited < threshold)
    problems.push_back("waited " + std::to_string(report->waited.count()) + " ms, under the threshold");
  if (report->collective.find("allreduce") == std::string::npos)
    problems.push_back("collective does not name the allreduce: " + report->collective);
  return problems;
}

// An output value no correct sum of the oracle's inputs reaches (|sum| <= 6 P).
template <class T>
constexpr T kUnwritten = T(12345);

}  // namespace earlybird::testing
