// Persistent collectives (earlybird/persistent.hpp), one rank's part, shared
// by the sim and MPI tiers. `Check` has expect(ok, what), wait(future, what)
// and error_of(future, what) (mpi/mpi_check.hpp, sim/sim_support.hpp's
// RankCheck); `Gate` has open() (rank 0) and pass() (the other ranks wait
// for rank 0's open()), so that rank 0 can start twice while its first start
// provably cannot have completed.
#pragma once

#include "oracle.hpp"

#include <earlybird/communicator.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace earlybird::testing {

// Start k's input: the oracle's inputs shifted by k, so that every start
// reduces different data and a start that reused stale data is caught.
template <class T>
void fill_shifted(std::vector<T>& v, int rank, Op op, int k) {
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(input_value<T>(rank, i, op) + k);
}

template <class T>
T expected_shifted(int ranks, std::size_t i, Op op, int k) {
  const T base = expected_value<T>(ranks, i, op);
  return static_cast<T>(op == Op::sum ? base + static_cast<T>(ranks * k) : base + k);  // min/max shift by k
}

template <class T>
bool all_shifted(const std::vector<T>& got, int ranks, Op op, int k) {
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != expected_shifted<T>(ranks, i, op, k)) return false;
  return true;
}

// allreduce (out of place, sum; in place, max), reduce and bcast persistent
// collectives of `count` elements, each started kStarts times with new
// contents, an immediate allreduce of another shape between starts.
template <class Check>
void check_persistent_starts(Communicator& comm, Check& check, std::size_t count) {
  constexpr int kStarts = 4;
  const int p = comm.size(), rank = comm.rank(), root = p - 1, bcast_root = p / 2;
  const std::string n = " count=" + std::to_string(count);
  std::vector<double> in(count), out(count), reduced(count);
  std::vector<std::int32_t> inout(count), buffer(count);
  auto allreduce = comm.allreduce_init(std::span<const double>(in), std::span<double>(out), Op::sum);
  auto in_place = comm.allreduce_init(std::span<std::int32_t>(inout), Op::max);
  auto reduce = comm.reduce_init(std::span<const double>(in), std::span<double>(reduced), Op::sum, root);
  auto bcast = comm.bcast_init(std::span<std::int32_t>(buffer), bcast_root);
  for (int k = 0; k < kStarts; ++k) {
    const std::string start = " start " + std::to_string(k) + n;
    fill_shifted(in, rank, Op::sum, k);
    fill_shifted(inout, rank, Op::max, k);
    for (std::size_t i = 0; i < count; ++i) buffer[i] = rank == bcast_root ? static_cast<std::int32_t>(3 * i) + k : -1;
    check.wait(allreduce.start(), "persistent allreduce" + start);
    check.expect(all_shifted(out, p, Op::sum, k), "persistent allreduce result" + start);
    check.wait(in_place.start(), "persistent allreduce in place" + start);
    check.expect(all_shifted(inout, p, Op::max, k), "persistent allreduce in place result" + start);
    std::vector<std::int64_t> other(5, rank + k), summed(5);
    check.wait(comm.allreduce(std::span<const std::int64_t>(other), std::span<std::int64_t>(summed), Op::sum),
               "immediate allreduce between starts" + start);
    check.expect(summed == std::vector<std::int64_t>(5, std::int64_t{p} * (p - 1) / 2 + std::int64_t{p} * k),
                 "immediate allreduce between starts result" + start);
    check.wait(reduce.start(), "persistent reduce" + start);
    if (rank == root) check.expect(all_shifted(reduced, p, Op::sum, k), "persistent reduce result" + start);
    check.wait(bcast.start(), "persistent bcast" + start);
    bool same = true;
    for (std::size_t i = 0; i < count; ++i) same = same && buffer[i] == static_cast<std::int32_t>(3 * i) + k;
    check.expect(same, "persistent bcast result" + start);
  }
}

// Starting again before the previous start completed fails that start only.
template <class Check, class Gate>
void check_started_twice(Communicator& comm, Check& check, Gate& gate) {
  const int p = comm.size(), rank = comm.rank();
  std::vector<double> data(100);
  fill_shifted(data, rank, Op::sum, 0);
  auto persistent = comm.allreduce_init(std::span<double>(data), Op::sum);
  if (p > 1 && rank == 0) {
    const Future first = persistent.start();  // cannot complete: the others wait at the gate
    const std::string error = check.error_of(persistent.start(), "second start");
    check.expect(error.find("started again before the previous start completed") != std::string::npos &&
                     error.find("allreduce") != std::string::npos && error.find("rank 0") != std::string::npos,
                 "second start names the collective, the rank and the cause, got: " + error);
    gate.open();
    check.wait(first, "first start after a refused second");
  } else {
    if (p > 1) gate.pass();
    check.wait(persistent.start(), "first start");
  }
  check.expect(all_shifted(data, p, Op::sum, 0), "started twice: the first start's result");
  fill_shifted(data, rank, Op::sum, 1);
  check.wait(persistent.start(), "a start after the first completed");
  check.expect(all_shifted(data, p, Op::sum, 1), "started twice: the next start's result");
}

// A call that cannot run fails every start with the immediate call's error;
// later calls on the communicator still match across ranks.
template <class Check>
void check_invalid_persistent(Communicator& comm, Check& check) {
  const int p = comm.size();
  std::vector<double> in(10, 1.0), out(10);
  auto bad_root = comm.reduce_init(in.data(), out.data(), in.size(), Datatype::float64, Op::sum, p);
  for (int k = 0; k < 2; ++k) {
    const std::string error = check.error_of(bad_root.start(), "reduce with root out of range");
    check.expect(error.find("reduce") != std::string::npos && error.find("root") != std::string::npos,
                 "an invalid persistent reduce names the collective and the root, got: " + error);
  }
  const std::string none = check.error_of(PersistentCollective().start(), "a default-constructed persistent");
  check.expect(none.find("invalid") != std::string::npos, "a default-constructed persistent fails, got: " + none);
  std::vector<double> ones(3, 1.0);
  check.wait(comm.allreduce(std::span<double>(ones), Op::sum), "allreduce after failed starts");
  check.expect(ones == std::vector<double>(3, static_cast<double>(p)), "allreduce after failed starts result");
}

}  // namespace earlybird::testing
