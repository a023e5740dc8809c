// Shared by the sim-tier tests: failures collected on rank threads and
// reported on the main thread (doctest's assertions are not thread-safe), and
// a watchdog-bounded wait that turns a hang into a failure naming the rank.
#pragma once

#include <earlybird/future.hpp>
#include <earlybird/sim.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <initializer_list>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
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

// Runs `body` on every rank of `world`, recording what a rank throws as a
// failure (so one bad case does not end the test), and bounds the whole run:
// a rank stuck outside a Future (a sleep, a blocking monitoring call) would
// hang world.run, so past `limit` the process exits naming the case.
inline void run_bounded(SimWorld& world, Failures& failures, const std::string& what,
                        const std::function<void(int, Communicator&)>& body,
                        std::chrono::seconds limit = std::chrono::seconds(120)) {
  std::packaged_task<void()> task([&] {
    world.run([&](int rank, Communicator& comm) {
      try {
        body(rank, comm);
      } catch (const std::exception& e) {
        failures.add(what + ": rank " + std::to_string(rank) + ": " + e.what());
      }
    });
  });
  std::future<void> done = task.get_future();
  std::thread runner(std::move(task));
  if (done.wait_for(limit) != std::future_status::ready) {
    std::fprintf(stderr, "WATCHDOG: %s did not finish in %lld s\n", what.c_str(), static_cast<long long>(limit.count()));
    std::fflush(stderr);
    std::_Exit(3);
  }
  runner.join();
  done.get();
}

// Runs check(world, p, failures) on a world of `p` ranks made with
// `options`, and reports its failures.
template <class Check>
void check_in_simulated_world(int p, const SimOptions& options, Check check) {
  CAPTURE(p);
  CAPTURE(options.ranks_per_node);
  CAPTURE(options.by_messages);
  SimWorld world(p, options);
  Failures failures;
  check(world, p, failures);
  failures.report();
}

// check_in_simulated_world on each (P, ranks per node) layout
// (SimOptions::ranks_per_node).
template <class Check>
void for_each_simulated_layout(std::initializer_list<std::pair<int, int>> layouts, Check check) {
  for (auto [p, per_node] : layouts) {
    SimOptions options;
    options.ranks_per_node = per_node;
    check_in_simulated_world(p, options, check);
  }
}

}  // namespace earlybird::testing

namespace earlybird::testing {

// The Check of the tier-shared cases (tests/common): failures recorded on
// the rank's thread, waits bounded by the watchdog.
class RankCheck {
 public:
  RankCheck(Failures& failures, int rank) : failures_(&failures), rank_(rank) {}
  void expect(bool ok, const std::string& what) {
    if (!ok) failures_->add("rank " + std::to_string(rank_) + ": " + what);
  }
  void wait(const Future& f, const std::string& what) {
    try {
      wait_bounded(f, rank_, what);
    } catch (const std::exception& e) {
      expect(false, what + ": " + e.what());
    }
  }
  // The error a failing future carries; "" if it succeeded.
  std::string error_of(const Future& f, const std::string& what) {
    try {
      wait_bounded(f, rank_, what);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }

 private:
  Failures* failures_;
  int rank_;
};

// Rank 0 opens it; pass() waits for that, bounded by the watchdog.
class Gate {
 public:
  void open() { opened_.store(true); }
  void pass() {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!opened_.load()) {
      if (std::chrono::steady_clock::now() > until) throw std::runtime_error("watchdog: gate never opened");
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

 private:
  std::atomic<bool> opened_{false};
};

}  // namespace earlybird::testing
