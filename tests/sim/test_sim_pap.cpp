// Sim tier: arrival-pattern-aware allreduce (sorted_linear_tree,
// pre_reduced_ring, arrival_chain, arrival_prr, arrival_greedy, auto_pap;
// ring as the control)
// over threads as ranks. Ranks arrive in patterns (none, one late, all random,
// all equal) and report their compute phase on every rank, no rank, some
// ranks or only just before the call; every result is checked exactly against
// the oracle. Also: changing arrival orders on one communicator, PAP and
// non-PAP collectives interleaved, non-commutative operators, edge() input
// errors, the straggler report, and simulated nodes (ticket orders that keep
// nodes whole).
#include <doctest/doctest.h>

#include "../common/arrival.hpp"
#include "../common/concat_op.hpp"
#include "../common/oracle.hpp"
#include "sim_support.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/sim.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <thread>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

using namespace earlybird;
using namespace earlybird::testing;

namespace {

constexpr auto kWait = std::chrono::seconds(30);  // per collective, beyond the runtime's own watchdog

SimOptions sim_options() {
  SimOptions options;
  options.timeout = std::chrono::milliseconds(15000);
  return options;
}

std::string on_rank(const std::string& what, int rank) { return what + ": rank " + std::to_string(rank); }

// Waits for `f` and checks `got` against the oracle's allreduce (Op::sum).
template <class T>
void expect_sum(const Future& f, const std::vector<T>& got, int rank, int ranks, const std::string& what,
                Failures& failures) {
  wait_bounded(f, rank, what, kWait);
  const std::size_t wrong = count_wrong(got, ranks, Op::sum);
  if (wrong) failures.add(on_rank(what, rank) + " has " + std::to_string(wrong) + " wrong elements");
}

// One rank's part of case `c`: its compute phase, then the allreduce.
template <class T>
void rank_case(Communicator& comm, const PapCase& c, int delay_ms, const std::string& what, Failures& failures) {
  const int rank = comm.rank();
  std::vector<T> in = make_input<T>(rank, c.count, Op::sum);
  std::vector<T> out(c.count, kUnwritten<T>);
  compute_phase(comm, delay_ms, c.edges);
  expect_sum(submit(comm, c, in, out), c.in_place ? in : out, rank, comm.size(), what, failures);
  if (!c.in_place && in != make_input<T>(rank, c.count, Op::sum)) failures.add(on_rank(what, rank) + ": input modified");
}

void run_case(SimWorld& world, const PapCase& c, const std::vector<int>& delays, const std::string& what,
              Failures& failures) {
  run_bounded(world, failures, what, [&](int rank, Communicator& comm) {
    const int delay = delays[static_cast<std::size_t>(rank)];
    if (c.use_double) rank_case<double>(comm, c, delay, what, failures);
    else rank_case<std::int32_t>(comm, c, delay, what, failures);
  });
}

void run_case(SimWorld& world, const PapCase& c, Failures& failures) {
  run_case(world, c, arrival_delays(c.arrival, world.size(), c.seed), describe(c, world.size()), failures);
}

// The shared list (tests/common/arrival.hpp, also the MPI tier's) and
// arrival_greedy, which only this tier runs so far.
std::vector<std::size_t> counts_for(int p) {
  return {0, 1, static_cast<std::size_t>(p + 1), 1000, 100000};
}

// A one-late pattern with a chosen late rank, for sequences of calls.
std::vector<int> late_rank_delays(int ranks, int late, int delay_ms) {
  std::vector<int> delays(static_cast<std::size_t>(ranks), 0);
  delays[static_cast<std::size_t>(late)] = delay_ms;
  return delays;
}

}  // namespace

TEST_CASE("the catalogue binds each PAP algorithm to its arrival order") {
  const std::vector<std::pair<std::string, coll::ArrivalOrder>> expected{
      {"sorted_linear_tree", coll::ArrivalOrder::estimated},
      {"pre_reduced_ring", coll::ArrivalOrder::estimated},
      {"arrival_chain", coll::ArrivalOrder::ticket},
      {"arrival_prr", coll::ArrivalOrder::ticket},
      {"arrival_greedy", coll::ArrivalOrder::ticket},
      {"ring", coll::ArrivalOrder::none}};
  for (const auto& [name, order] : expected) {
    CAPTURE(name);
    const coll::Algorithm* algorithm = coll::find_allreduce(name);
    CHECK(algorithm != nullptr);
    if (algorithm) CHECK(algorithm->arrival == order);
  }
}

TEST_CASE("PAP allreduce is exact for every arrival pattern and monitoring mode, P = 1..8") {
  for (int p : {1, 2, 3, 4, 5, 8}) {
    std::uint32_t offset = static_cast<std::uint32_t>(p);
    for (const std::string& algorithm : pap_algorithms()) {
      CAPTURE(p);
      CAPTURE(algorithm);
      SimWorld world(p, sim_options());
      Failures failures;
      for (const PapCase& c : sample_cases(algorithm, counts_for(p), offset)) run_case(world, c, failures);
      failures.report();
      offset += 7;
    }
  }
}

TEST_CASE("consecutive PAP calls on one communicator, a different late rank each time") {
  const Edges modes[] = {Edges::every_rank, Edges::unmonitored, Edges::just_before};  // unmonitored: stale estimates
  for (int p : {3, 5}) {
    for (const std::string& algorithm : pap_algorithms()) {
      CAPTURE(p);
      CAPTURE(algorithm);
      SimWorld world(p, sim_options());
      Failures failures;
      for (int k = 0; k < 2 * p; ++k) {
        PapCase c{algorithm, 1000 + 37 * static_cast<std::size_t>(k), k % 2 == 1, k % 4 >= 2, Arrival::one_late,
                  modes[k % 3], static_cast<std::uint32_t>(k)};
        const int late = (2 * k + 1) % p;
        const std::string what = describe(c, p) + " call " + std::to_string(k) + " late rank " + std::to_string(late);
        run_case(world, c, late_rank_delays(p, late, 30), what, failures);
      }
      failures.report();
    }
  }
}

namespace {

// One round of the interleaving test: PAP allreduces around a bcast and a
// reduce, either all in flight before the first wait or waited one by one.
struct MixedRound {
  int round;
  bool in_flight;
};

// A submitted collective and how to count its wrong elements once done.
struct Step {
  const char* name;
  Future future;
  std::function<std::size_t()> wrong;
  bool settled = false;
};

// Waits for a step (an error is a failure; the buffers stay alive until every
// step has settled) and checks its result.
void settle(Step& step, int rank, const std::string& what, Failures& failures) {
  if (step.settled) return;
  step.settled = true;
  const std::string which = on_rank(what, rank) + ": " + step.name;
  try {
    wait_bounded(step.future, rank, which, kWait);
  } catch (const Error& e) {
    failures.add(which + ": " + e.what());
    return;
  }
  if (const std::size_t n = step.wrong()) failures.add(which + ": " + std::to_string(n) + " wrong elements");
}

void mixed_round(Communicator& comm, const MixedRound& m, Failures& failures) {
  const int p = comm.size(), rank = comm.rank();
  const int bcast_root = m.round % p, reduce_root = (m.round + 1) % p;
  const std::string what = "mixed round " + std::to_string(m.round) + (m.in_flight ? " in flight" : "") +
                           " P=" + std::to_string(p);
  auto a = make_input<std::int32_t>(rank, 777, Op::sum);
  const auto source = make_input<std::int32_t>(bcast_root, 513, Op::sum);
  std::vector<std::int32_t> b = rank == bcast_root ? source : std::vector<std::int32_t>(513, -7);
  auto r_in = make_input<double>(rank, 1001, Op::sum);
  std::vector<double> r_out(1001, kUnwritten<double>);
  auto c = make_input<double>(rank, 2000, Op::sum);
  auto d = make_input<std::int32_t>(rank, static_cast<std::size_t>(p + 1), Op::sum);
  auto e = make_input<double>(rank, 100, Op::sum);
  auto g = make_input<std::int32_t>(rank, 4097, Op::sum);
  std::vector<Step> steps;
  steps.reserve(7);
  auto add = [&](const char* name, Future f, std::function<std::size_t()> wrong) {
    steps.push_back({name, std::move(f), std::move(wrong)});
    if (!m.in_flight) settle(steps.back(), rank, what, failures);
  };
  add("allreduce arrival_chain", comm.allreduce(std::span<std::int32_t>(a), Op::sum, named("arrival_chain")),
      [&] { return count_wrong(a, p, Op::sum); });
  add("bcast", comm.bcast(std::span<std::int32_t>(b), bcast_root), [&] { return std::size_t{b != source}; });
  add("reduce", comm.reduce(std::span<const double>(r_in), std::span<double>(r_out), Op::sum, reduce_root),
      [&] { return rank == reduce_root ? count_wrong(r_out, p, Op::sum) : 0; });
  add("allreduce pre_reduced_ring", comm.allreduce(std::span<double>(c), Op::sum, named("pre_reduced_ring")),
      [&] { return count_wrong(c, p, Op::sum); });
  add("allreduce sorted_linear_tree", comm.allreduce(std::span<std::int32_t>(d), Op::sum, named("sorted_linear_tree")),
      [&] { return count_wrong(d, p, Op::sum); });
  add("allreduce arrival_prr", comm.allreduce(std::span<double>(e), Op::sum, named("arrival_prr")),
      [&] { return count_wrong(e, p, Op::sum); });
  add("allreduce auto_pap", comm.allreduce(std::span<std::int32_t>(g), Op::sum, named("auto_pap")),
      [&] { return count_wrong(g, p, Op::sum); });
  for (Step& step : steps) settle(step, rank, what, failures);
}

}  // namespace

// An arrival-ordered call of one batch runs on the calling thread like any
// other (docs/design.md, "Execution"): it takes its ticket and waits for its
// binding there. With a long caller-run budget every call is complete when
// it returns, a late rank's too (its peers wait for it on their callers).
// (The hand-over after the default 20 us budget, with ranks late by
// milliseconds, is what the pattern tests above run.)
TEST_CASE("arrival-ordered calls run on the caller: complete on return, exact") {
  constexpr std::size_t kCount = 1000;
  for (const std::string& algorithm : pap_algorithms()) {
    CAPTURE(algorithm);
    SimOptions options = sim_options();
    options.caller_run = std::chrono::seconds(10);
    SimWorld world(3, options);
    Failures failures;
    run_bounded(world, failures, algorithm + " on the caller", [&](int rank, Communicator& comm) {
      for (int k = 0; k < 4; ++k) {
        const std::string what = algorithm + " call " + std::to_string(k);
        if (k == 3 && rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        std::vector<double> v = make_input<double>(rank, kCount + static_cast<std::size_t>(k), Op::sum);
        Future f = comm.allreduce(std::span<double>(v), Op::sum, named(algorithm));
        if (!f.ready()) failures.add(on_rank(what + " not complete on return", rank));
        expect_sum(f, v, rank, 3, what, failures);
      }
    });
    failures.report();
  }
}

TEST_CASE("PAP and non-PAP collectives interleave on one communicator") {
  for (int p : {4, 5}) {
    CAPTURE(p);
    SimWorld world(p, sim_options());
    Failures failures;
    for (int round = 0; round <= p; ++round) {
      const std::vector<int> delays = late_rank_delays(p, round % p, 30);
      const Edges edges = round % 2 == 0 ? Edges::every_rank : Edges::some_ranks;
      run_bounded(world, failures, "mixed round " + std::to_string(round), [&](int rank, Communicator& comm) {
        compute_phase(comm, delays[static_cast<std::size_t>(rank)], edges);
        mixed_round(comm, {round, round % 2 == 0}, failures);
      });
    }
    failures.report();
  }
}

namespace {

// How a collective ended on one rank: "exact", "wrong" or "error", and the
// error's message.
struct Outcome {
  std::string kind;
  std::string message;
};

// Rank 0 arrives last (so arrival order is not rank order) and every rank
// reduces its digits with the non-commutative concatenation. Every rank must
// end the same way; returns rank 0's outcome.
Outcome concatenation_outcome(SimWorld& world, const std::string& algorithm, Failures& failures) {
  const int p = world.size();
  std::vector<Outcome> outcomes(static_cast<std::size_t>(p));
  run_bounded(world, failures, algorithm + " concatenation", [&](int rank, Communicator& comm) {
    std::vector<std::int64_t> v = digits(rank, 64);
    compute_phase(comm, rank == 0 ? 30 : 0, Edges::every_rank);
    Outcome& mine = outcomes[static_cast<std::size_t>(rank)];
    try {
      wait_bounded(comm.allreduce(std::span<std::int64_t>(v), concatenation(), named(algorithm)), rank, algorithm, kWait);
    } catch (const Error& e) {
      mine = {"error", e.what()};
      return;
    }
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < v.size(); ++i) wrong += v[i] != ordered_concatenation(p, i);
    mine.kind = wrong ? "wrong" : "exact";
  });
  for (int r = 1; r < p; ++r)
    if (outcomes[static_cast<std::size_t>(r)].kind != outcomes[0].kind)
      failures.add(algorithm + ": rank 0 ended " + outcomes[0].kind + ", rank " + std::to_string(r) + " " +
                   outcomes[static_cast<std::size_t>(r)].kind);
  return outcomes[0];
}

bool clear_commutativity_error(const Outcome& outcome, const std::string& algorithm) {
  return outcome.kind == "error" && outcome.message.find("commutative") != std::string::npos &&
         outcome.message.find(algorithm) != std::string::npos;
}

}  // namespace

TEST_CASE("a non-commutative operator: exact in rank order, or refused with a clear error") {
  SimWorld world(3, sim_options());
  Failures failures;
  for (const std::string& algorithm : pap_algorithms()) {
    CAPTURE(algorithm);
    const Outcome outcome = concatenation_outcome(world, algorithm, failures);
    CAPTURE(outcome.kind);
    CAPTURE(outcome.message);
    const coll::Algorithm* entry = coll::find_allreduce(algorithm);
    REQUIRE(entry != nullptr);
    if (entry->needs_commutative) CHECK(clear_commutativity_error(outcome, algorithm));
    else CHECK(outcome.kind == "exact");
  }
  failures.report();
}

TEST_CASE("edge() rejects fractions outside (0, 1] and calls outside a phase") {
  SimWorld world(2, sim_options());
  Failures failures;
  run_bounded(world, failures, "edge errors", [&](int rank, Communicator& comm) {
    for (const std::string& problem : edge_input_problems(comm)) failures.add(on_rank(problem, rank));
    // The communicator still works after the refused calls.
    auto v = make_input<std::int32_t>(rank, 300, Op::sum);
    expect_sum(comm.allreduce(std::span<std::int32_t>(v), Op::sum, named("sorted_linear_tree")), v, rank, 2,
               "allreduce after edge errors", failures);
  });
  failures.report();
}

namespace {

struct StragglerOutcome {
  std::vector<std::optional<StragglerReport>> reports;
};

// Every rank runs one exact allreduce with `options`; rank `late` (if any)
// sleeps `delay_ms` first. Returns each rank's straggler report afterwards.
StragglerOutcome run_with_straggler(int p, int late, int delay_ms, const CollectiveOptions& options,
                                    Failures& failures) {
  SimWorld world(p, sim_options());
  StragglerOutcome out{std::vector<std::optional<StragglerReport>>(static_cast<std::size_t>(p))};
  const std::string what = options.algorithm + " straggler test";
  run_bounded(world, failures, what, [&](int rank, Communicator& comm) {
    auto v = make_input<double>(rank, 4099, Op::sum);
    if (rank == late) sleep_ms(delay_ms);
    expect_sum(comm.allreduce(std::span<double>(v), Op::sum, options), v, rank, p, what, failures);
    out.reports[static_cast<std::size_t>(rank)] = comm.straggler_report();
  });
  return out;
}

}  // namespace

TEST_CASE("a late rank is named in the other ranks' straggler report") {
  constexpr int p = 4, late = 3;
  for (const std::string algorithm : {"ring", "arrival_chain"}) {
    CAPTURE(algorithm);
    CollectiveOptions options = named(algorithm);
    // Well under the 400 ms delay, well over the skew of the punctual ranks'
    // start (under ThreadSanitizer on 2 busy cores one took over 50 ms).
    options.straggler_after = std::chrono::milliseconds(150);
    Failures failures;
    const StragglerOutcome out = run_with_straggler(p, late, 400, options, failures);
    failures.report();
    for (int rank = 0; rank < late; ++rank) {
      CAPTURE(rank);
      const auto& report = out.reports[static_cast<std::size_t>(rank)];
      for (const std::string& problem : straggler_problems(report, {late}, options.straggler_after))
        FAIL_CHECK(on_rank(problem, rank));
      if (!report) continue;
      if (out.reports[0]) CHECK(report->sequence == out.reports[0]->sequence);  // one call, one number
    }
  }
}

TEST_CASE("no straggler report without a straggler, or without a threshold") {
  ::unsetenv("EARLYBIRD_STRAGGLER_MS");  // threshold zero means off unless this is set
  CollectiveOptions patient = named("arrival_chain");
  patient.straggler_after = std::chrono::milliseconds(60000);
  CollectiveOptions off = named("ring");
  Failures failures;
  const StragglerOutcome balanced = run_with_straggler(3, -1, 0, patient, failures);
  const StragglerOutcome unwatched = run_with_straggler(3, 2, 200, off, failures);
  failures.report();
  for (int rank = 0; rank < 3; ++rank) {
    CAPTURE(rank);
    CHECK_FALSE(balanced.reports[static_cast<std::size_t>(rank)].has_value());
    CHECK_FALSE(unwatched.reports[static_cast<std::size_t>(rank)].has_value());
  }
}

namespace {

// Rank 0 (last in rank order) computes 100 ms longer; the others publish their
// estimates at once. Whichever estimates reached the decider in time, the
// order must follow them: known estimates ascending, missing ones after, in
// rank order — so the late rank comes after every rank whose estimate was
// known, although rank order would put it first.
void check_estimate_order(const std::vector<std::optional<ArrivalDecision>>& seen, Failures& failures) {
  const ArrivalDecision* decider = nullptr;
  for (const auto& d : seen)
    if (d && d->decided_here) decider = &*d;
  if (!decider) return failures.add("no rank reports having decided");
  for (const auto& d : seen)
    if (!d || d->order != decider->order || d->algorithm != "sorted_linear_tree")
      return failures.add("ranks report different decisions");
  std::vector<std::pair<int, std::int64_t>> expected_keys;
  for (int r : decider->order) {
    const auto& e = decider->estimates[static_cast<std::size_t>(r)];
    expected_keys.emplace_back(e ? 0 : 1, e ? *e : r);
  }
  if (!std::is_sorted(expected_keys.begin(), expected_keys.end()))
    failures.add("the order does not follow the estimates the decider used");
  const auto late = std::find(decider->order.begin(), decider->order.end(), 0) - decider->order.begin();
  for (std::size_t v = static_cast<std::size_t>(late) + 1; v < decider->order.size(); ++v)
    if (decider->estimates[static_cast<std::size_t>(decider->order[v])])
      failures.add("a rank with a known estimate comes after the late rank 0");
}

// Whether `comm`'s rank (published under `mutex`) has entered its
// `sequence`-th collective and waited there (its straggler report for that
// call exists).
bool entered(std::mutex& mutex, const Communicator& comm, int sequence) {
  std::optional<StragglerReport> report;
  {
    std::lock_guard lock(mutex);
    if (comm.valid()) report = comm.straggler_report();
  }
  return report && report->sequence == static_cast<std::uint64_t>(sequence);
}

// Rank `late` waits until every other rank has entered its `sequence`-th
// collective (their straggler reports for it exist: their calls need a short
// straggler_after), so that its own call then takes the last ticket.
void call_after_the_others(std::mutex& mutex, const std::vector<Communicator>& comms, int late, int sequence) {
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  for (int r = 0; r < static_cast<int>(comms.size()); ++r)
    while (r != late && !entered(mutex, comms[static_cast<std::size_t>(r)], sequence)) {
      if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("rank " + std::to_string(r) + " never entered");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

}  // namespace

TEST_CASE("sorted_linear_tree orders ranks by their estimates: a late rank comes after every known estimate") {
  SimWorld world(4, sim_options());
  Failures failures;
  std::vector<std::optional<ArrivalDecision>> seen(4);
  run_bounded(world, failures, "estimate order", [&](int rank, Communicator& comm) {
    auto v = make_input<std::int32_t>(rank, 1000, Op::sum);
    comm.phase_begin();
    if (rank == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the late rank's compute
    comm.edge(1.0);
    comm.phase_end();
    expect_sum(comm.allreduce(std::span<std::int32_t>(v), Op::sum, named("sorted_linear_tree")), v, rank, 4,
               "sorted_linear_tree", failures);
    seen[static_cast<std::size_t>(rank)] = comm.last_decision();
  });
  check_estimate_order(seen, failures);
  failures.report();
}

TEST_CASE("auto_pap runs a static schedule for equal arrivals and the ticket chain after one rank came late by far "
          "more than tau") {
  const int ranks = 4, late = 2;
  setenv("EARLYBIRD_PAP_TAU_US", "30000", 1);  // a balanced ring: 180 ms
  SimWorld world(ranks, sim_options());
  Failures failures;
  std::mutex comms_mutex;  // rank threads publish their communicator; the late rank reads the others'
  std::vector<Communicator> comms(ranks);
  std::vector<std::vector<std::string>> chosen(ranks);
  std::vector<int> late_position(ranks, -1);
  std::vector<std::vector<int>> balanced_order(ranks);
  CollectiveOptions options = named("auto_pap");
  options.straggler_after = std::chrono::milliseconds(1);
  run_bounded(world, failures, "auto_pap choices", [&](int rank, Communicator& comm) {
    {
      std::lock_guard lock(comms_mutex);
      comms[static_cast<std::size_t>(rank)] = comm;
    }
    for (int call = 0; call < 3; ++call) {
      // 256 KiB: the model has the arrival board pay for itself here at both
      // levels of the default profile (where it cannot, auto_pap runs auto's
      // choice: config::arrival_stand_in).
      auto v = make_input<std::int32_t>(rank, 65536, Op::sum);
      // Calls 1 and 2: the late rank calls 600 ms late, and only once every
      // other rank has entered (their straggler reports for this call exist),
      // so it holds the last ticket.
      if (rank == late && call > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(600));
        call_after_the_others(comms_mutex, comms, late, call + 1);
      }
      expect_sum(comm.allreduce(std::span<std::int32_t>(v), Op::sum, options), v, rank, ranks,
                 "auto_pap call " + std::to_string(call), failures);
      const auto decision = comm.last_decision();
      chosen[static_cast<std::size_t>(rank)].push_back(decision ? decision->algorithm : "none");
      if (call == 0 && decision) balanced_order[static_cast<std::size_t>(rank)] = decision->order;
      if (call == 2 && rank == late && decision) late_position[static_cast<std::size_t>(rank)] =
          static_cast<int>(std::find(decision->order.begin(), decision->order.end(), late) - decision->order.begin());
    }
  });
  unsetenv("EARLYBIRD_PAP_TAU_US");
  // Call 0: no history, no estimates: the model's fastest static schedule
  // (config::fastest_schedule; which one is the unit tests' business), in
  // rank order. Call 1: the history (call 0) is balanced: the same. Call 2:
  // call 1's arrivals spread >= 600 ms: the chain by tickets, in which the
  // late rank holds the last ticket.
  const std::string balanced = chosen[0].empty() ? "" : chosen[0][0];
  const coll::Algorithm* entry = coll::find_algorithm(coll::Collective::allreduce, balanced);
  REQUIRE(entry);
  CHECK(entry->arrival == coll::ArrivalOrder::none);
  CHECK(entry->executor == coll::Executor::steps);
  for (int r = 0; r < ranks; ++r) {
    CHECK(chosen[static_cast<std::size_t>(r)] == std::vector<std::string>{balanced, balanced, "arrival_chain"});
    CHECK(balanced_order[static_cast<std::size_t>(r)] == std::vector<int>{0, 1, 2, 3});
  }
  CHECK(late_position[late] == ranks - 1);
  failures.report();
}


TEST_CASE("arrival_greedy is exact at P = 2..9, in place and not, one rank late and random lateness, several segments") {
  const Arrival patterns[] = {Arrival::none, Arrival::one_late, Arrival::all_random};
  for (int p : {2, 3, 4, 5, 6, 7, 9}) {
    CAPTURE(p);
    SimWorld world(p, sim_options());
    Failures failures;
    std::uint32_t k = 0;
    for (const Arrival arrival : patterns)
      for (const bool in_place : {false, true}) {
        const std::size_t count = counts_for(p)[(k + static_cast<std::uint32_t>(p)) % counts_for(p).size()];
        const PapCase c{"arrival_greedy", count, in_place, k % 2 == 1, arrival, Edges::unmonitored, 500 + k};
        run_case(world, c, failures);
        ++k;
      }
    // Small segments (the greedy's pipeline) with a random and a late rank.
    for (const Arrival arrival : {Arrival::one_late, Arrival::all_random}) {
      const std::vector<int> delays = arrival_delays(arrival, p, 900 + k++);
      run_bounded(world, failures, "arrival_greedy 1 KiB segments", [&](int rank, Communicator& comm) {
        auto v = make_input<double>(rank, 3001, Op::sum);
        sleep_ms(delays[static_cast<std::size_t>(rank)]);
        CollectiveOptions options = named("arrival_greedy");
        options.segment_bytes = 1024;
        expect_sum(comm.allreduce(std::span<double>(v), Op::sum, options), v, rank, p,
                   "arrival_greedy 1 KiB segments " + std::string(to_string(arrival)), failures);
      });
    }
    failures.report();
  }
}

TEST_CASE("arrival_greedy: the rank that calls last holds the last position, and every rank that learnt it agrees") {
  const int ranks = 5;
  for (const int late : {0, 3}) {  // not rank order's last, then the middle
    CAPTURE(late);
    SimWorld world(ranks, sim_options());
    Failures failures;
    std::mutex comms_mutex;
    std::vector<Communicator> comms(ranks);
    std::vector<std::optional<ArrivalDecision>> seen(ranks);
    CollectiveOptions options = named("arrival_greedy");
    options.straggler_after = std::chrono::milliseconds(1);
    options.segment_bytes = 4096;
    run_bounded(world, failures, "arrival_greedy late rank", [&](int rank, Communicator& comm) {
      {
        std::lock_guard lock(comms_mutex);
        comms[static_cast<std::size_t>(rank)] = comm;
      }
      auto v = make_input<std::int32_t>(rank, 10000, Op::sum);
      if (rank == late) call_after_the_others(comms_mutex, comms, late, 1);
      expect_sum(comm.allreduce(std::span<std::int32_t>(v), Op::sum, options), v, rank, ranks, "arrival_greedy",
                 failures);
      seen[static_cast<std::size_t>(rank)] = comm.last_decision();
    });
    failures.report();
    const auto& mine = seen[static_cast<std::size_t>(late)];
    REQUIRE(mine.has_value());
    CHECK(mine->algorithm == "arrival_greedy");
    REQUIRE(mine->order.size() == static_cast<std::size_t>(ranks));
    CHECK(mine->order[ranks - 1] == late);
    int knew = 0;  // at least id 0, which put the early partial into the late rank's window
    for (int r = 0; r < ranks; ++r) {
      const auto& d = seen[static_cast<std::size_t>(r)];
      REQUIRE(d.has_value());
      CHECK_FALSE(d->decided_here);  // ticket-bound: nobody decides
      if (r == late || d->order.size() != static_cast<std::size_t>(ranks) || d->order[ranks - 1] < 0) continue;
      CHECK(d->order[ranks - 1] == late);
      ++knew;
    }
    CHECK(knew >= 1);
  }
}

// Over nodes (simulated, SimOptions::ranks_per_node) ticket-bound algorithms
// keep nodes whole: nodes in the order they filled, the last rank to arrive
// last (pap::arrival_positions).
TEST_CASE("over simulated nodes: every PAP algorithm exact; ticket-bound orders keep nodes whole, the late rank last") {
  for (auto [p, n] : {std::pair{4, 2}, {6, 2}, {6, 3}, {8, 4}}) {
    CAPTURE(p);
    CAPTURE(n);
    SimOptions options = sim_options();
    options.ranks_per_node = n;
    SimWorld world(p, options);
    Failures failures;
    std::uint32_t seed = static_cast<std::uint32_t>(p * n);
    for (const std::string& algorithm : pap_algorithms())
      for (const PapCase& c : sample_cases(algorithm, {1, 1000, 100000}, seed++)) run_case(world, c, failures);
    for (const int late : {0, p - 1, n}) {
      // A fresh world: the late rank's call is every rank's first (sequence 1).
      SimWorld fresh(p, options);
      std::mutex mutex;
      std::vector<Communicator> comms(static_cast<std::size_t>(p));
      std::vector<std::optional<ArrivalDecision>> seen(static_cast<std::size_t>(p));
      CollectiveOptions chain = named("arrival_chain");
      chain.straggler_after = std::chrono::milliseconds(1);  // call_after_the_others sees who entered
      const std::string what = "arrival_chain over nodes, late rank " + std::to_string(late);
      run_bounded(fresh, failures, what, [&](int rank, Communicator& comm) {
        {
          std::lock_guard lock(mutex);
          comms[static_cast<std::size_t>(rank)] = comm;
        }
        auto v = make_input<std::int32_t>(rank, 5000, Op::sum);
        if (rank == late) call_after_the_others(mutex, comms, late, 1);
        expect_sum(comm.allreduce(std::span<std::int32_t>(v), Op::sum, chain), v, rank, p, what, failures);
        std::lock_guard lock(mutex);
        seen[static_cast<std::size_t>(rank)] = comm.last_decision();
      });
      const auto& mine = seen[static_cast<std::size_t>(late)];
      REQUIRE(mine.has_value());
      REQUIRE(mine->order.size() == static_cast<std::size_t>(p));
      CHECK(mine->order.back() == late);
      for (int v = 0; v < p; ++v) CHECK(mine->order[static_cast<std::size_t>(v)] / n == mine->order[static_cast<std::size_t>(v - v % n)] / n);
    }
    failures.report();
  }
}
