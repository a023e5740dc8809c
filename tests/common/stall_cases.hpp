// A rank that stops calling (issue 14's first fault), one rank's part,
// shared by the sim and MPI faults tests (Check as in persistent_cases.hpp).
// Every rank but `missing` calls `collective` with `algorithm`; each must
// fail within the watchdog's timeout + 1 s with an error naming `missing`,
// or finish when its part does not depend on it; after a failure the
// communicator refuses the next call, naming the first failure.
#pragma once

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/communicator.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace earlybird::testing {

// One call of `collective` (1000 doubles per block) with `algorithm`.
inline Future submit_any(Communicator& comm, coll::Collective collective, const std::string& algorithm,
                         std::vector<double>& block, std::vector<double>& all_blocks) {
  CollectiveOptions options;
  options.algorithm = algorithm;
  const std::span<double> first(all_blocks.data(), block.size());
  switch (collective) {
    case coll::Collective::allreduce: return comm.allreduce(std::span<const double>(block), first, Op::sum, options);
    case coll::Collective::reduce: return comm.reduce(std::span<const double>(block), first, Op::sum, 0, options);
    case coll::Collective::bcast: return comm.bcast(std::span<double>(block), 0, options);
    case coll::Collective::allgather:
      return comm.allgather(std::span<const double>(block), std::span<double>(all_blocks), options);
    case coll::Collective::reduce_scatter:
      return comm.reduce_scatter(std::span<const double>(all_blocks), std::span<double>(block), Op::sum, options);
  }
  return {};
}

template <class Check>
void check_stalled_call(Communicator& comm, Check& check, coll::Collective collective, const std::string& algorithm,
                        int missing, std::chrono::milliseconds timeout) {
  const std::string what = std::string(coll::to_string(collective)) + " " + algorithm + " P=" +
                           std::to_string(comm.size()) + " without rank " + std::to_string(missing);
  std::vector<double> block(1000, 1.0), all_blocks(1000 * static_cast<std::size_t>(comm.size()), 1.0);
  const auto start = std::chrono::steady_clock::now();
  const Future f = submit_any(comm, collective, algorithm, block, all_blocks);
  std::string error;
  bool done = false;
  try {
    done = f.wait_for(timeout + std::chrono::seconds(1));
  } catch (const std::exception& e) {
    done = true;
    error = e.what();
  }
  const auto took = std::chrono::steady_clock::now() - start;
  check.expect(done && took <= timeout + std::chrono::seconds(1), what + ": not over within the timeout + 1 s");
  if (!done || error.empty()) return;  // finished: this rank's part does not depend on the missing one
  check.expect(error.find("rank " + std::to_string(missing)) != std::string::npos,
               what + ": the error does not name rank " + std::to_string(missing) + ": " + error);
  std::vector<double> next(3, 1.0);
  std::string refused;
  try {
    comm.allreduce(std::span<double>(next), Op::sum).wait_for(std::chrono::seconds(5));
  } catch (const std::exception& e) {
    refused = e.what();
  }
  check.expect(refused.find("earlier collective") != std::string::npos,
               what + ": the next call was not refused with the first failure: " + refused);
}

}  // namespace earlybird::testing
