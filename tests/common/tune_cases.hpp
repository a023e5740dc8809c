// Communicator::tune (earlybird/tune.hpp), one rank's part, shared by the
// sim and MPI tiers. `Check` has expect(ok, what), wait(future, what) and
// error_of(future, what) (mpi/mpi_check.hpp, sim/sim_support.hpp's
// RankCheck).
#pragma once

#include "concat_op.hpp"
#include "oracle.hpp"

#include <earlybird/communicator.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace earlybird::testing {

// Whether every rank holds the same `value` (two allreduces, min and max,
// naming their algorithm: an `auto` call could tune first under
// EARLYBIRD_TUNE).
inline bool same_on_every_rank(Communicator& comm, double value) {
  double low = value, high = value;
  CollectiveOptions named;
  named.algorithm = "ring";
  comm.allreduce(std::span<double>(&low, 1), Op::min, named).wait();
  comm.allreduce(std::span<double>(&high, 1), Op::max, named).wait();
  return low == value && high == value;
}

// One `auto` call of `collective` (count per rank, per block where blocked;
// root 0) on oracle inputs, checked exactly; "" when right, else what was wrong.
inline std::string auto_call_problem(Communicator& comm, coll::Collective collective, std::size_t count,
                                     const std::string& what) {
  using coll::Collective;
  const int p = comm.size(), rank = comm.rank();
  const std::size_t n = static_cast<std::size_t>(p);
  const std::size_t in_count = collective == Collective::reduce_scatter ? n * count : count;
  const std::size_t out_count = collective == Collective::allgather ? n * count : count;
  std::vector<std::int32_t> in = make_input<std::int32_t>(rank, in_count, Op::sum), out(out_count, -7);
  if (collective == Collective::bcast) out = in;
  Future f;
  switch (collective) {
    case Collective::allreduce: f = comm.allreduce(in.data(), out.data(), count, Datatype::int32, Op::sum); break;
    case Collective::reduce: f = comm.reduce(in.data(), out.data(), count, Datatype::int32, Op::sum, 0); break;
    case Collective::bcast: f = comm.bcast(out.data(), count, Datatype::int32, 0); break;
    case Collective::allgather: f = comm.allgather(in.data(), out.data(), count, Datatype::int32); break;
    case Collective::reduce_scatter:
      f = comm.reduce_scatter(in.data(), out.data(), count, Datatype::int32, Op::sum);
      break;
  }
  f.wait();
  for (std::size_t i = 0; i < out_count; ++i) {
    std::int32_t want = 0;
    switch (collective) {
      case Collective::allreduce: want = expected_value<std::int32_t>(p, i, Op::sum); break;
      case Collective::reduce:
        if (rank != 0) return "";
        want = expected_value<std::int32_t>(p, i, Op::sum);
        break;
      case Collective::bcast: want = input_value<std::int32_t>(0, i, Op::sum); break;
      case Collective::allgather: want = input_value<std::int32_t>(static_cast<int>(i / count), i % count, Op::sum); break;
      case Collective::reduce_scatter:
        want = expected_value<std::int32_t>(p, static_cast<std::size_t>(rank) * count + i, Op::sum);
        break;
    }
    if (out[i] != want) return what + ": element " + std::to_string(i) + " is " + std::to_string(out[i]) +
                               ", expected " + std::to_string(want);
  }
  return "";
}

// tune() of every collective at `count`: a report every rank shares (the
// same winner, rounds and figures), the winner the fastest trial, and then
// `auto` calls of that class right.
template <class Check>
void check_tune_each_collective(Communicator& comm, Check& check, std::size_t count) {
  for (coll::Collective collective : coll::kCollectives) {
    const std::string what = std::string("tune ") + coll::to_string(collective) + " count=" + std::to_string(count);
    TuneOptions options;
    options.budget = std::chrono::milliseconds(20);
    const TuneReport report = comm.tune(collective, count, Datatype::int32, Op::sum, options);
    check.expect(report.collective == coll::to_string(collective), what + ": collective named");
    check.expect(report.bytes == count * 4 && report.class_bytes >= report.bytes, what + ": bytes and class");
    if (comm.size() == 1 || count == 0) {
      check.expect(report.trials.empty() && report.chosen.empty(), what + ": nothing to measure, nothing pinned");
    } else {
      check.expect(!report.trials.empty() && report.trials.size() <= 4, what + ": the model's first four at most");
      check.expect(report.rounds >= 5 && report.rounds <= 400, what + ": rounds " + std::to_string(report.rounds));
      double fastest = 1e300;
      for (const TuneTrial& t : report.trials) {
        check.expect(t.measured_s > 0 && t.predicted_s > 0, what + ": " + t.algorithm + " measured and predicted");
        fastest = std::min(fastest, t.measured_s);
      }
      const auto winner = std::find_if(report.trials.begin(), report.trials.end(),
                                       [&](const TuneTrial& t) { return t.algorithm == report.chosen; });
      check.expect(winner != report.trials.end() && winner->measured_s == fastest, what + ": the fastest chosen");
      check.expect(same_on_every_rank(comm, fastest) && same_on_every_rank(comm, report.rounds) &&
                       same_on_every_rank(comm, static_cast<double>(winner - report.trials.begin())),
                   what + ": every rank has the same figures and winner");
    }
    for (std::size_t c : {count, count / 2 + 1}) {  // the tuned size and another of its class
      const std::string problem = auto_call_problem(comm, collective, c, what + ", then auto at " + std::to_string(c));
      check.expect(problem.empty(), problem);
    }
  }
}

// The error of an `auto` allreduce of `count` int32 with no output buffer:
// its text names the algorithm the call would have run.
template <class Check>
std::string unrunnable_auto_allreduce(Communicator& comm, Check& check, std::size_t count) {
  std::vector<std::int32_t> in(count, 1);
  return check.error_of(comm.allreduce(in.data(), nullptr, count, Datatype::int32, Op::sum), "unrunnable allreduce");
}

// A pin changes what `auto` runs for the class and only there: pinned to
// ring, then to binomial, an `auto` call of the class names each in turn; a
// call naming an algorithm keeps it; a non-commutative call of the same size
// is another class and stays right.
template <class Check>
void check_tune_pins_the_class(Communicator& comm, Check& check) {
  if (comm.size() == 1) return;
  constexpr std::size_t kCount = 3000;
  for (const char* name : {"ring", "binomial"}) {
    TuneOptions only;
    only.algorithms = {name};
    only.budget = std::chrono::milliseconds(5);
    const TuneReport report = comm.tune(coll::Collective::allreduce, kCount, Datatype::int32, Op::sum, only);
    check.expect(report.chosen == name && report.trials.size() == 1, std::string("pinned ") + name);
    const std::string error = unrunnable_auto_allreduce(comm, check, kCount);
    check.expect(error.find(std::string("algorithm=") + name + ",") != std::string::npos,
                 std::string("auto runs the pin ") + name + ": " + error);
    const std::string problem = auto_call_problem(comm, coll::Collective::allreduce, kCount + 1, "auto after the pin");
    check.expect(problem.empty(), problem);
  }
  std::vector<std::int32_t> in(kCount, 1);
  CollectiveOptions named;
  named.algorithm = "recursive_doubling";
  const std::string error = check.error_of(comm.allreduce(in.data(), nullptr, kCount, Datatype::int32, Op::sum, named),
                                           "unrunnable named allreduce");
  check.expect(error.find("algorithm=recursive_doubling,") != std::string::npos, "a named algorithm kept: " + error);
  // 3000 int64 (24000 B) is a class of its own: its commutative class
  // pinned to ring, a non-commutative call of that size must not take the pin.
  TuneOptions ring;
  ring.algorithms = {"ring"};
  ring.budget = std::chrono::milliseconds(5);
  comm.tune(coll::Collective::allreduce, kCount, Datatype::int64, Op::sum, ring);
  const std::vector<std::int64_t> digits_in = digits(comm.rank(), kCount);
  std::vector<std::int64_t> out(kCount, -1);
  check.wait(comm.allreduce(std::span<const std::int64_t>(digits_in), std::span<std::int64_t>(out), concatenation()),
             "non-commutative auto allreduce after a commutative pin");
  bool right = true;
  for (std::size_t i = 0; i < kCount; ++i) {
    std::int64_t want = digit(0, i);
    for (int r = 1; r < comm.size(); ++r) want = concat(want, digit(r, i));
    right = right && out[i] == want;
  }
  check.expect(right, "non-commutative auto allreduce keeps rank order after a commutative pin");
}

// Bad requests fail on every rank at once, naming tune, the rank and the
// cause; the communicator goes on working.
template <class Check>
void check_tune_refuses_bad_input(Communicator& comm, Check& check) {
  auto error_of = [&](const TuneOptions& options, ReduceOp op) -> std::string {
    try {
      comm.tune(coll::Collective::allreduce, 100, Datatype::int64, std::move(op), options);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  const std::string where = "tune(allreduce, 800 B) on rank " + std::to_string(comm.rank());
  TuneOptions unknown;
  unknown.algorithms = {"ring", "no_such_algorithm"};
  const std::string e1 = error_of(unknown, Op::sum);
  check.expect(e1.find(where) != std::string::npos && e1.find("unknown algorithm no_such_algorithm") != std::string::npos,
               "unknown algorithm refused: " + e1);
  TuneOptions by_arrival;
  by_arrival.algorithms = {"auto_pap"};
  const std::string e2 = error_of(by_arrival, Op::sum);
  check.expect(e2.find("orders by arrival") != std::string::npos, "arrival-ordered refused: " + e2);
  TuneOptions ring;
  ring.algorithms = {"ring"};
  const std::string e3 = error_of(ring, concatenation());
  check.expect(e3.find("needs a commutative operator") != std::string::npos, "commutative-only refused: " + e3);
  const std::string problem = auto_call_problem(comm, coll::Collective::allreduce, 100, "allreduce after refusals");
  check.expect(problem.empty(), problem);
}

// On a communicator tuning on first use (EARLYBIRD_TUNE, SimOptions::tune):
// the first `auto` call of each collective's class adds one report to
// tune_reports() (the same winner on every rank) and is right; a second call
// of the class adds none; neither does a call naming its algorithm, a count
// of 0, or anything at P = 1. A persistent collective's init and a
// partitioned allreduce's parts tune their classes too.
template <class Check>
void check_tune_on_first_use(Communicator& comm, Check& check) {
  const std::size_t tuned = comm.size() == 1 ? 0 : 1;
  std::size_t reports = comm.tune_reports().size();
  auto expect_reports = [&](std::size_t added, const std::string& what) {
    const std::vector<TuneReport> now = comm.tune_reports();
    check.expect(now.size() == reports + added, what + ": " + std::to_string(now.size() - reports) +
                                                    " tune reports added, expected " + std::to_string(added));
    reports = now.size();
    if (added == 0 || now.empty()) return;
    const TuneReport& last = now.back();
    const auto winner = std::find_if(last.trials.begin(), last.trials.end(),
                                     [&](const TuneTrial& t) { return t.algorithm == last.chosen; });
    check.expect(winner != last.trials.end() && last.trials.size() <= 2, what + ": " + summary(last));
    check.expect(same_on_every_rank(comm, static_cast<double>(winner - last.trials.begin())),
                 what + ": the same winner on every rank");
  };
  for (coll::Collective collective : coll::kCollectives) {
    const std::string what = std::string("first auto ") + coll::to_string(collective);
    std::string problem = auto_call_problem(comm, collective, 300, what);
    check.expect(problem.empty(), problem);
    expect_reports(tuned, what);
    const std::vector<TuneReport> now = comm.tune_reports();
    if (tuned && !now.empty())
      check.expect(now.back().collective == coll::to_string(collective) && now.back().bytes == 1200,
                   what + ": the report names the call's collective and size");
    problem = auto_call_problem(comm, collective, 301, what + ", again in its class");
    check.expect(problem.empty(), problem);
    expect_reports(0, what + ", again in its class");
  }
  std::vector<std::int32_t> data(70000, 1);
  CollectiveOptions named;
  named.algorithm = "ring";
  check.wait(comm.allreduce(std::span<std::int32_t>(data), Op::sum, named), "named allreduce");
  check.wait(comm.allreduce(std::span<std::int32_t>(data.data(), 0), Op::sum), "auto allreduce of 0");
  expect_reports(0, "a named call and a count of 0");
  PersistentCollective persistent = comm.allreduce_init(std::span<std::int32_t>(data), Op::sum);
  expect_reports(tuned, "a persistent allreduce's init");
  for (int start = 0; start < 2; ++start) {
    std::fill(data.begin(), data.end(), comm.rank() + 1);
    check.wait(persistent.start(), "persistent start");
    check.expect(data.back() == comm.size() * (comm.size() + 1) / 2, "persistent allreduce after its tune");
  }
  std::vector<std::int32_t> parted(1 << 20, 2);
  PartitionedCollective partitioned = comm.allreduce_partitioned(std::span<std::int32_t>(parted), Op::sum, 2);
  partitioned.ready(1);
  partitioned.ready(0);
  check.wait(partitioned.future(), "partitioned allreduce");
  expect_reports(tuned, "a partitioned allreduce's two parts of one class");  // its collectives after the parts'
  check.expect(parted.front() == 2 * comm.size() && parted.back() == 2 * comm.size(),
               "partitioned allreduce after its tune");
}

}  // namespace earlybird::testing
