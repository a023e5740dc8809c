// Shared by the progress engine's unit tests: bounded waits on the engine
// and on conditions another thread makes true.
#pragma once

#include "progress/progress_engine.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <type_traits>

namespace earlybird::engine_test {

using namespace std::chrono_literals;

constexpr auto kBound = std::chrono::seconds(5);

template <class T>
bool ready_within(const std::future<T>& future) {
  return future.wait_for(kBound) == std::future_status::ready;
}

// Runs `work` on the progress thread and returns its result (waits at most kBound).
template <class Work>
auto on_engine(ProgressEngine& engine, Work work) {
  using Result = decltype(work());
  auto promise = std::make_shared<std::promise<Result>>();
  auto future = promise->get_future();
  engine.submit([promise, work]() mutable {
    if constexpr (std::is_void_v<Result>) {
      work();
      promise->set_value();
    } else {
      promise->set_value(work());
    }
  });
  REQUIRE(ready_within(future));
  return future.get();
}

// Waits (bounded) until `condition` holds; returns whether it did.
template <class Condition>
bool eventually(Condition condition) {
  const auto deadline = std::chrono::steady_clock::now() + kBound;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(100us);
  }
  return true;
}

}  // namespace earlybird::engine_test
