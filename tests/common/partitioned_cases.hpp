// Partitioned allreduce (earlybird/partitioned.hpp), one rank's part, shared
// by the sim and MPI tiers (Check as in persistent_cases.hpp). Each part is
// produced (written) and then readied, in an order of the rank's own, from
// several threads.
#pragma once

#include "oracle.hpp"

#include <earlybird/communicator.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace earlybird::testing {

// Each part produced and readied once, in a random order per rank and
// `seed`, by `threads` threads taking parts from a shared list.
template <class T>
void produce_parts(PartitionedCollective& partitioned, const std::vector<std::size_t>& counts, std::vector<T>& data,
                   int rank, unsigned seed, int threads) {
  std::vector<std::size_t> order(counts.size()), first(counts.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::shuffle(order.begin(), order.end(), std::mt19937(seed * 977u + static_cast<unsigned>(rank)));
  std::exclusive_scan(counts.begin(), counts.end(), first.begin(), std::size_t{0});
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t k; (k = next.fetch_add(1)) < order.size();) {
      const std::size_t part = order[k];
      for (std::size_t i = first[part]; i < first[part] + counts[part]; ++i) data[i] = input_value<T>(rank, i, Op::sum);
      partitioned.ready(part);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& thread : pool) thread.join();
}

// In place and out of place, parts readied in random orders from three
// threads, an immediate allreduce before creation and one submitted after
// it (which runs after the parts).
template <class Check>
void check_partitioned(Communicator& comm, Check& check, const std::vector<std::size_t>& counts, unsigned seed) {
  const int p = comm.size(), rank = comm.rank();
  const std::size_t count = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
  const std::string what = " (" + std::to_string(counts.size()) + " parts, " + std::to_string(count) + " elements, seed " +
                           std::to_string(seed) + ")";
  std::vector<std::int64_t> before(3, rank), after(4, 2 * rank);
  check.wait(comm.allreduce(std::span<std::int64_t>(before), Op::sum), "allreduce before" + what);

  std::vector<double> inout(count, -1.0);
  auto in_place = comm.allreduce_partitioned(std::span<double>(inout), Op::sum, counts);
  check.expect(in_place.parts() == counts.size(), "parts()" + what);
  const Future later = comm.allreduce(std::span<std::int64_t>(after), Op::sum);
  produce_parts(in_place, counts, inout, rank, seed, 3);
  check.wait(in_place.future(), "partitioned allreduce in place" + what);
  check.expect(count_wrong(inout, p, Op::sum) == 0, "partitioned allreduce in place result" + what);
  check.wait(later, "allreduce submitted after the partitioned one" + what);
  check.expect(after == std::vector<std::int64_t>(4, std::int64_t{p} * (p - 1)), "allreduce after result" + what);
  check.expect(before == std::vector<std::int64_t>(3, std::int64_t{p} * (p - 1) / 2), "allreduce before result" + what);

  std::vector<std::int32_t> in(count), out(count, -1);
  auto out_of_place = comm.allreduce_partitioned(std::span<const std::int32_t>(in), std::span<std::int32_t>(out),
                                                 Op::sum, counts);
  produce_parts(out_of_place, counts, in, rank, seed + 1, 2);
  check.wait(out_of_place.future(), "partitioned allreduce out of place" + what);
  check.expect(count_wrong(out, p, Op::sum) == 0, "partitioned allreduce out of place result" + what);
}

// Errors: ready() out of range or twice throws naming the part; parts that
// do not add up, or none, fail the future.
template <class Check>
void check_partitioned_errors(Communicator& comm, Check& check) {
  std::vector<float> data(10, 1.0f);
  auto partitioned = comm.allreduce_partitioned(std::span<float>(data), Op::sum, std::size_t{2});
  auto error_of_ready = [&](std::size_t part) -> std::string {
    try {
      partitioned.ready(part);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  const std::string out_of_range = error_of_ready(2);
  check.expect(out_of_range.find("no such part") != std::string::npos &&
                   out_of_range.find("rank " + std::to_string(comm.rank())) != std::string::npos,
               "ready(2) of 2 parts names the part and the rank, got: " + out_of_range);
  check.expect(error_of_ready(0).empty() && error_of_ready(1).empty(), "ready(0), ready(1)");
  const std::string twice = error_of_ready(1);
  check.expect(twice.find("already ready") != std::string::npos, "ready(1) twice, got: " + twice);
  check.wait(partitioned.future(), "partitioned allreduce after refused ready() calls");
  check.expect(data == std::vector<float>(10, static_cast<float>(comm.size())), "result after refused ready() calls");

  auto wrong_sum = comm.allreduce_partitioned(std::span<float>(data), Op::sum, std::vector<std::size_t>{3, 3});
  const std::string sum_error = check.error_of(wrong_sum.future(), "parts that do not add up");
  check.expect(sum_error.find("the parts hold 6 elements, the vector 10") != std::string::npos,
               "parts that do not add up, got: " + sum_error);
  auto none = comm.allreduce_partitioned(std::span<float>(data), Op::sum, std::vector<std::size_t>{});
  check.expect(check.error_of(none.future(), "no parts").find("no parts") != std::string::npos, "no parts");
}

// Every rank drops the handle with part 1 of 2 never readied: part 1 fails
// (it never runs on the stale buffer) and so does the future. `comm` is
// broken afterwards (use a communicator of its own).
template <class Check>
void check_partitioned_dropped(Communicator& comm, Check& check) {
  std::vector<double> data(64, 1.0);
  Future future;
  {
    auto partitioned = comm.allreduce_partitioned(std::span<double>(data), Op::sum, std::size_t{2});
    future = partitioned.future();
    partitioned.ready(0);
  }
  const std::string error = check.error_of(future, "dropped partitioned allreduce");
  check.expect(error.find("part 1 was never ready") != std::string::npos,
               "a dropped partitioned allreduce fails naming the part, got: " + error);
}

}  // namespace earlybird::testing
