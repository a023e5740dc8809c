// The progress engine (runtime/src/progress/progress_engine): requests run on
// its thread in submission order, activated Pollables are polled there until
// they report themselves inactive, the loop blocks when it has nothing to do,
// background tasks run elsewhere, and shutdown finishes pending requests,
// active pollables and background tasks first.
// Every wait is bounded (kBound); no sleep decides a result, except the idle
// test's measuring window, which a correct engine passes whatever its length.
#include <doctest/doctest.h>

#include "engine_support.hpp"
#include "progress/progress_engine.hpp"

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

using namespace earlybird;
using namespace earlybird::engine_test;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<ProgressEngine> make_engine() { return std::make_unique<ProgressEngine>(EngineOptions{1, -1}); }

// Destroys `engine` on another thread; false if that took longer than kBound
// (the thread, which owns the engine, is then left behind).
bool destroyed_within_bound(std::unique_ptr<ProgressEngine> engine) {
  auto destroyed = std::make_shared<std::promise<void>>();
  auto future = destroyed->get_future();
  std::thread destroyer([engine = std::move(engine), destroyed]() mutable {
    engine.reset();
    destroyed->set_value();
  });
  if (!ready_within(future)) {
    destroyer.detach();
    return false;
  }
  destroyer.join();
  return true;
}

// Active for `polls` polls, reporting progress or not; counts its polls and
// whether each came from the progress thread.
class CountdownPollable : public Pollable {
 public:
  CountdownPollable(const ProgressEngine& engine, int polls, bool report_progress)
      : engine_(&engine), target_(polls), report_progress_(report_progress) {}
  bool poll(bool& still_active) override {
    if (!engine_->on_progress_thread()) off_thread_.store(true);
    const int n = polls_.fetch_add(1) + 1;
    still_active = n < target_;
    if (n == target_) inactive_.set_value();
    return report_progress_;
  }
  std::future<void> inactive() { return inactive_.get_future(); }
  int polls() const { return polls_.load(); }
  bool polled_off_thread() const { return off_thread_.load(); }

 private:
  const ProgressEngine* engine_;
  int target_;
  bool report_progress_;
  std::atomic<int> polls_{0};
  std::atomic<bool> off_thread_{false};
  std::promise<void> inactive_;
};

}  // namespace

TEST_CASE("a submitted request runs on the progress thread, not the caller's") {
  auto engine = make_engine();
  CHECK_FALSE(engine->on_progress_thread());
  const auto [on_progress, id] =
      on_engine(*engine, [&] { return std::pair(engine->on_progress_thread(), std::this_thread::get_id()); });
  CHECK(on_progress);
  CHECK(id != std::this_thread::get_id());
  CHECK(destroyed_within_bound(std::move(engine)));
}

TEST_CASE("requests run in submission order: one producer's in its order, among several producers too") {
  auto engine = make_engine();
  constexpr int kProducers = 4, kEach = 500;
  std::vector<std::pair<int, int>> ran;  // (producer, index); progress thread only until the last request
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p)
    producers.emplace_back([&, p] {
      for (int i = 0; i < kEach; ++i) engine->submit([&ran, p, i] { ran.emplace_back(p, i); });
    });
  for (auto& producer : producers) producer.join();
  on_engine(*engine, [] {});  // after every request above
  REQUIRE(ran.size() == kProducers * kEach);
  std::vector<int> next(kProducers, 0);
  bool in_order = true;
  for (const auto& [p, i] : ran) in_order &= (i == next[static_cast<std::size_t>(p)]++);
  CHECK(in_order);
  CHECK(destroyed_within_bound(std::move(engine)));
}

TEST_CASE("a request may submit more: it runs after, on the progress thread") {
  auto engine = make_engine();
  std::vector<int> ran;
  auto inner_done = std::make_shared<std::promise<bool>>();
  auto inner = inner_done->get_future();
  engine->submit([&, inner_done] {
    ran.push_back(1);
    engine->submit([&, inner_done] {
      ran.push_back(3);
      inner_done->set_value(engine->on_progress_thread());
    });
    ran.push_back(2);
  });
  REQUIRE(ready_within(inner));
  CHECK(inner.get());
  CHECK(ran == std::vector<int>{1, 2, 3});
  CHECK(destroyed_within_bound(std::move(engine)));
}

TEST_CASE("an activated pollable is polled on the progress thread until inactive, then never again") {
  auto engine = make_engine();
  auto pollable = std::make_shared<CountdownPollable>(*engine, 100, true);
  auto inactive = pollable->inactive();
  on_engine(*engine, [&] {
    engine->activate(pollable);
    engine->activate(pollable);  // once active, activating again adds nothing
  });
  REQUIRE(ready_within(inactive));
  for (int turn = 0; turn < 3; ++turn) on_engine(*engine, [] {});  // more loop turns
  CHECK(pollable->polls() == 100);
  CHECK_FALSE(pollable->polled_off_thread());
  CHECK(destroyed_within_bound(std::move(engine)));
}

TEST_CASE("a pollable that makes no progress keeps being polled through the backoff") {
  auto engine = make_engine();
  auto pollable = std::make_shared<CountdownPollable>(*engine, 2500, false);
  auto inactive = pollable->inactive();
  on_engine(*engine, [&] { engine->activate(pollable); });
  REQUIRE(ready_within(inactive));
  CHECK(pollable->polls() == 2500);
  CHECK(destroyed_within_bound(std::move(engine)));
}

TEST_CASE("the engine keeps an active pollable alive and lets it go once inactive") {
  auto engine = make_engine();
  auto pollable = std::make_shared<CountdownPollable>(*engine, 200, true);
  auto inactive = pollable->inactive();
  std::weak_ptr<CountdownPollable> watch = pollable;
  on_engine(*engine, [&engine, p = std::move(pollable)]() mutable { engine->activate(std::move(p)); });
  REQUIRE(ready_within(inactive));  // polled to the end with only the engine holding it
  CHECK(on_engine(*engine, [&] { return watch.expired(); }));
  CHECK(destroyed_within_bound(std::move(engine)));
}

TEST_CASE("idle, the engine blocks: its loop does not turn until a request comes") {
  auto engine = make_engine();
  const std::uint64_t blocks_before = on_engine(*engine, [&] { return engine->idle_blocks(); });
  REQUIRE(eventually([&] { return engine->idle_blocks() > blocks_before; }));
  const std::uint64_t turns_idle = engine->loop_turns();
  const std::uint64_t blocks_idle = engine->idle_blocks();
  std::this_thread::sleep_for(50ms);  // a spinning loop would turn thousands of times
  CHECK(engine->loop_turns() == turns_idle);
  CHECK(engine->idle_blocks() == blocks_idle);
  // A request wakes it.
  CHECK(on_engine(*engine, [] { return 7; }) == 7);
  CHECK(engine->loop_turns() > turns_idle);
  CHECK(destroyed_within_bound(std::move(engine)));
}

TEST_CASE("idle after a pollable finishes: blocks again, the pollable not polled") {
  auto engine = make_engine();
  auto pollable = std::make_shared<CountdownPollable>(*engine, 50, false);
  auto inactive = pollable->inactive();
  const std::uint64_t blocks_before = on_engine(*engine, [&] {
    engine->activate(pollable);
    return engine->idle_blocks();
  });
  REQUIRE(ready_within(inactive));
  REQUIRE(eventually([&] { return engine->idle_blocks() > blocks_before; }));
  const std::uint64_t turns_idle = engine->loop_turns();
  std::this_thread::sleep_for(20ms);
  CHECK(engine->loop_turns() == turns_idle);
  CHECK(pollable->polls() == 50);
  CHECK(destroyed_within_bound(std::move(engine)));
}

TEST_CASE("shutdown runs the requests still pending first") {
  auto engine = make_engine();
  auto ran = std::make_shared<std::atomic<int>>(0);
  auto gate = std::make_shared<std::promise<void>>();
  std::shared_future<void> opened = gate->get_future().share();
  // The first request holds the loop (bounded) so the rest stay queued.
  engine->submit([opened, ran] {
    if (opened.wait_for(kBound) == std::future_status::ready) ran->fetch_add(1);
  });
  for (int i = 0; i < 999; ++i) engine->submit([ran] { ran->fetch_add(1); });
  auto destroyed = std::async(std::launch::async, [&engine] { return destroyed_within_bound(std::move(engine)); });
  gate->set_value();
  REQUIRE(ready_within(destroyed));
  CHECK(destroyed.get());
  CHECK(ran->load() == 1000);
}

TEST_CASE("shutdown polls an active pollable to the end first") {
  auto engine = make_engine();
  auto pollable = std::make_shared<CountdownPollable>(*engine, 300, true);
  on_engine(*engine, [&] { engine->activate(pollable); });
  CHECK(destroyed_within_bound(std::move(engine)));
  CHECK(pollable->polls() == 300);
}

TEST_CASE("shutdown of an engine that never had work is prompt") {
  for (int i = 0; i < 10; ++i) CHECK(destroyed_within_bound(make_engine()));
}

TEST_CASE("a background task runs off the progress thread while the loop goes on; shutdown waits for it") {
  auto engine = make_engine();
  auto gate = std::make_shared<std::promise<void>>();
  std::shared_future<void> opened = gate->get_future().share();
  auto finished = std::make_shared<std::atomic<bool>>(false);
  auto ran_on = std::make_shared<std::promise<bool>>();
  std::future<bool> off_loop = ran_on->get_future();
  ProgressEngine* raw = engine.get();
  engine->run_in_background([=] {
    ran_on->set_value(!raw->on_progress_thread());
    if (opened.wait_for(kBound) == std::future_status::ready) finished->store(true);
  });
  REQUIRE(ready_within(off_loop));
  CHECK(off_loop.get());
  // The background task holds nothing up: a request still runs (bounded).
  CHECK(on_engine(*engine, [] { return true; }));
  auto destroyed = std::async(std::launch::async, [&engine] { return destroyed_within_bound(std::move(engine)); });
  CHECK(destroyed.wait_for(100ms) == std::future_status::timeout);  // still waiting for the task
  gate->set_value();
  REQUIRE(ready_within(destroyed));
  CHECK(destroyed.get());
  CHECK(finished->load());
}

TEST_CASE("the loop polls soon for this machine's ranks, sleeps briefly for messages or a driving caller, long when idle") {
  struct Waiting final : Pollable {
    Waiting(bool urgent, bool messages, bool idle) : urgent_(urgent), messages_(messages), idle_(idle) {}
    bool poll(bool& still_active) override {
      still_active = true;
      return false;
    }
    bool urgent() const override { return urgent_; }
    bool idle() const override { return idle_; }
    bool waits_for_messages() const override { return messages_; }
    bool urgent_, messages_, idle_;
  };
  const auto store = std::make_shared<Waiting>(true, false, false);
  const auto message = std::make_shared<Waiting>(true, true, false);
  const auto idle = std::make_shared<Waiting>(false, false, true);
  const auto idle_transport = std::make_shared<Waiting>(false, true, true);
  const auto caller_drives = std::make_shared<Waiting>(false, true, false);
  using Active = std::vector<std::shared_ptr<Pollable>>;
  for (const bool shared : {false, true}) {
    CAPTURE(shared);
    CHECK(pause_for(Active{store}, shared) == Pause::soon);
    CHECK(pause_for(Active{message, store}, shared) == Pause::soon);
    CHECK(pause_for(Active{idle}, shared) == Pause::idle);
    CHECK(pause_for(Active{idle_transport, idle}, shared) == Pause::idle);
    CHECK(pause_for(Active{}, shared) == Pause::idle);
    CHECK(pause_for(Active{caller_drives, idle}, shared) == Pause::brief);
  }
  CHECK(pause_for(Active{message}, false) == Pause::brief);
  CHECK(pause_for(Active{message, idle_transport}, false) == Pause::brief);
  CHECK(pause_for(Active{message}, true) == Pause::soon);  // the message may come from a rank on these cores
}
