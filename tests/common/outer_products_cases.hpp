// Sum of outer products (Communicator::sum_outer_products, DSOP), one rank's
// part, shared by the sim and MPI tiers (Check as in persistent_cases.hpp).
// The oracle: every rank's vectors are known functions of (rank, index), so
// each rank computes G = sum_r a_r b_r^T itself, in the element type's own
// arithmetic (integers wrap). Floating-point entries are small integers, so
// every summation order gives the exact sum.
#pragma once

#include <earlybird/collectives/outer_products.hpp>
#include <earlybird/communicator.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace earlybird::testing {

// Rank r's a[i] and b[j]: small integers of both signs (int8 products wrap).
template <class T>
T dsop_a(int rank, std::size_t i) {
  const auto v = static_cast<long long>((rank * 7 + static_cast<int>(i % 23) * 3) % 17) - 5;
  return static_cast<T>(std::is_unsigned_v<T> ? v + 5 : v);
}
template <class T>
T dsop_b(int rank, std::size_t j) {
  const auto v = static_cast<long long>((rank * 5 + static_cast<int>(j % 19) * 11) % 13) - 6;
  return static_cast<T>(std::is_unsigned_v<T> ? v + 6 : v);
}

// G's element (i, j) over `ranks` ranks, wrapping as the library does.
template <class T>
T dsop_expected(int ranks, std::size_t i, std::size_t j) {
  if constexpr (std::is_floating_point_v<T>) {
    T sum = 0;
    for (int r = 0; r < ranks; ++r) sum += dsop_a<T>(r, i) * dsop_b<T>(r, j);
    return sum;
  } else {
    std::uint64_t sum = 0;
    for (int r = 0; r < ranks; ++r)
      sum += static_cast<std::uint64_t>(static_cast<std::int64_t>(dsop_a<T>(r, i))) *
             static_cast<std::uint64_t>(static_cast<std::int64_t>(dsop_b<T>(r, j)));
    return static_cast<T>(sum);
  }
}

// One call on `comm` of `rows` x `cols` with `algorithm` ("" = the model's
// choice): submitted between two allreduces (which must still match across
// ranks and come out right), result against the oracle.
template <class T, class Check>
void check_outer_products_once(Communicator& comm, Check& check, std::size_t rows, std::size_t cols,
                               const std::string& algorithm) {
  const int p = comm.size(), rank = comm.rank();
  const std::string what = " (" + (algorithm.empty() ? std::string("auto") : algorithm) + ", " + std::to_string(rows) +
                           " x " + std::to_string(cols) + ", " + to_string(datatype_of<T>()) + ")";
  std::vector<T> a(rows), b(cols), g(rows * cols, T{42});
  for (std::size_t i = 0; i < rows; ++i) a[i] = dsop_a<T>(rank, i);
  for (std::size_t j = 0; j < cols; ++j) b[j] = dsop_b<T>(rank, j);
  std::vector<std::int64_t> before(3, rank), after(2, 1);
  const Future first = comm.allreduce(std::span<std::int64_t>(before), Op::sum);
  CollectiveOptions options;
  options.algorithm = algorithm;
  const Future dsop = comm.sum_outer_products<T>(a, b, g, options);
  std::fill(a.begin(), a.end(), T{99});  // the call copied them
  const Future last = comm.allreduce(std::span<std::int64_t>(after), Op::sum);
  check.wait(dsop, "sum_outer_products" + what);
  check.wait(first, "allreduce before sum_outer_products" + what);
  check.wait(last, "allreduce after sum_outer_products" + what);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) wrong += g[i * cols + j] != dsop_expected<T>(p, i, j);
  check.expect(wrong == 0, "sum_outer_products result" + what + ": " + std::to_string(wrong) + " wrong");
  check.expect(before == std::vector<std::int64_t>(3, std::int64_t{p} * (p - 1) / 2) &&
                   after == std::vector<std::int64_t>(2, p),
               "allreduces around sum_outer_products" + what);
}

// Every algorithm and the model's choice over shapes with empty, single,
// uneven (rows x cols not a multiple of P) and larger matrices, several types.
template <class Check>
void check_outer_products(Communicator& comm, Check& check) {
  const std::vector<std::pair<std::size_t, std::size_t>> shapes = {{0, 0}, {0, 4}, {3, 0}, {1, 1},
                                                                     {7, 13}, {64, 33}, {301, 257}};
  std::vector<std::string> names = {""};
  for (auto a : coll::outer_product_algorithms()) names.emplace_back(coll::to_string(a));
  for (const auto& name : names)
    for (const auto& [rows, cols] : shapes) {
      check_outer_products_once<double>(comm, check, rows, cols, name);
      check_outer_products_once<std::int32_t>(comm, check, rows, cols, name);
    }
  for (const auto& name : names) {
    check_outer_products_once<float>(comm, check, 40, 90, name);
    check_outer_products_once<std::int8_t>(comm, check, 50, 31, name);  // wraps
    check_outer_products_once<std::uint64_t>(comm, check, 9, 70, name);
  }
}

// Several calls in flight at once on one communicator, waited in reverse.
template <class Check>
void check_outer_products_in_flight(Communicator& comm, Check& check) {
  const int p = comm.size(), rank = comm.rank();
  constexpr std::size_t kCalls = 4, kRows = 37, kCols = 29;
  std::vector<std::vector<double>> a(kCalls, std::vector<double>(kRows)), b(kCalls, std::vector<double>(kCols)),
      g(kCalls, std::vector<double>(kRows * kCols));
  std::vector<Future> futures;
  for (std::size_t c = 0; c < kCalls; ++c) {
    for (std::size_t i = 0; i < kRows; ++i) a[c][i] = dsop_a<double>(rank, i + c);
    for (std::size_t j = 0; j < kCols; ++j) b[c][j] = dsop_b<double>(rank, j);
    CollectiveOptions options;
    options.algorithm = std::string(coll::to_string(coll::outer_product_algorithms()[c]));
    futures.push_back(comm.sum_outer_products<double>(a[c], b[c], g[c], options));
  }
  for (std::size_t c = kCalls; c-- > 0;) {
    check.wait(futures[c], "sum_outer_products in flight, call " + std::to_string(c));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < kRows; ++i)
      for (std::size_t j = 0; j < kCols; ++j) wrong += g[c][i * kCols + j] != dsop_expected<double>(p, i + c, j);
    check.expect(wrong == 0, "sum_outer_products in flight, call " + std::to_string(c) + ": " +
                                 std::to_string(wrong) + " wrong");
  }
}

// Errors found on the calling rank: every rank makes the same bad call, so
// nothing is submitted anywhere and the communicator stays usable.
template <class Check>
void check_outer_products_errors(Communicator& comm, Check& check) {
  const std::string rank_text = "on rank " + std::to_string(comm.rank());
  std::vector<double> a(4, 1.0), b(3, 1.0), g(12);
  auto expect_error = [&](const Future& f, const std::string& cause, const std::string& what) {
    const std::string error = check.error_of(f, what);
    check.expect(error.find("sum_outer_products") != std::string::npos && error.find(rank_text) != std::string::npos &&
                     error.find(cause) != std::string::npos,
                 what + ": expected an error naming sum_outer_products, the rank and '" + cause + "', got: " + error);
  };
  CollectiveOptions unknown;
  unknown.algorithm = "ring";
  expect_error(comm.sum_outer_products<double>(a, b, g, unknown), "no such algorithm", "unknown algorithm");
  expect_error(comm.sum_outer_products(nullptr, b.data(), g.data(), 4, 3, Datatype::float64), "a null input vector",
               "null a");
  expect_error(comm.sum_outer_products(a.data(), b.data(), nullptr, 4, 3, Datatype::float64), "a null output matrix",
               "null g");
  std::vector<double> shared(4 + 12);
  expect_error(comm.sum_outer_products(shared.data(), b.data(), shared.data() + 2, 4, 3, Datatype::float64),
               "overlaps an input vector", "g overlapping a");
  std::string thrown;
  try {
    (void)comm.sum_outer_products<double>(a, b, std::span<double>(g).first(11));
  } catch (const Error& e) {
    thrown = e.what();
  }
  check.expect(thrown.find("sum_outer_products") != std::string::npos && thrown.find("expected 12") != std::string::npos,
               "a matrix of the wrong length throws, got: " + thrown);
  check_outer_products_once<double>(comm, check, 5, 6, "");  // still usable
}

// Rank 0 calls with one row more than the others: every rank's Future fails
// (within the call's timeout) naming sum_outer_products and its rank, never a
// wrong matrix. `comm` may be broken afterwards (use one of its own).
template <class Check>
void check_outer_products_mismatch(Communicator& comm, Check& check, const std::string& algorithm) {
  // Large enough that a producer is still computing G when the mismatch
  // fails its stage: the Future must not complete (and let the caller free G)
  // before the producer has stopped.
  const std::size_t rows = comm.rank() == 0 ? 801 : 800, cols = 1000;
  std::vector<double> a(rows, 1.0), b(cols, 1.0), g(rows * cols);
  CollectiveOptions options;
  options.algorithm = algorithm;
  options.timeout = std::chrono::milliseconds(1000);  // a rank no mismatched rank talks to learns by its watchdog
  const std::string error = check.error_of(comm.sum_outer_products<double>(a, b, g, options), "mismatched rows");
  check.expect(error.find("sum_outer_products") != std::string::npos &&
                   error.find("on rank " + std::to_string(comm.rank())) != std::string::npos,
               "mismatched rows (" + algorithm + "): expected an error naming sum_outer_products, got: " + error);
}

}  // namespace earlybird::testing
