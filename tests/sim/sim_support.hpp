// Shared by the sim-tier tests: failures collected on rank threads and
// reported on the main thread (doctest's assertions are not thread-safe), and
// a watchdog-bounded wait that turns a hang into a failure naming the rank.
#pragma once

#include <earlybird/future.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace earlybird::testing {

struct Failures {
  std::mutex mutex;
  std::vector<std::string> list;
  void add(std::string what) {
    std::lock_guard lock(mutex);
    list.push_back(std::move(what));
  }
  void report() {
    for (const auto& f : list) FAIL_CHECK(f);
    CHECK(list.empty());
  }
};

inline void wait_bounded(const Future& f, int rank, const std::string& what,
                         std::chrono::seconds limit = std::chrono::seconds(60)) {
  if (!f.wait_for(limit)) throw std::runtime_error("watchdog: rank " + std::to_string(rank) + " stuck in " + what);
}

}  // namespace earlybird::testing
