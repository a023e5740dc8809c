// The progress thread's scheduling class (ProgressEngine::set_yielding):
// where the process's threads share CPUs it sleeps as SCHED_BATCH while it
// only serves idle pollables, and runs requests and urgent pollables as
// SCHED_OTHER; elsewhere it never changes class. A file of its own: the
// shared case is forced with topo::note_machine_ranks, which stays for the
// process. Every wait is bounded (kBound); the two sleeps are measuring
// windows (a wrong engine would change class within them), which a correct
// engine passes whatever their length.
#include <doctest/doctest.h>

#include "engine_support.hpp"
#include "progress/progress_engine.hpp"
#include "topo/topology.hpp"

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

using namespace earlybird;
using namespace earlybird::engine_test;
using namespace std::chrono_literals;

namespace {

int progress_thread_id(ProgressEngine& engine) {
  return on_engine(engine, [] { return static_cast<int>(gettid()); });
}

// Polled until stopped, never progressing; urgent or only served.
class WaitingPollable : public Pollable {
 public:
  explicit WaitingPollable(bool urgent) : urgent_(urgent) {}
  bool poll(bool& still_active) override {
    still_active = !stop_.load();
    return false;
  }
  bool urgent() const override { return urgent_; }
  void stop() { stop_.store(true); }

 private:
  bool urgent_;
  std::atomic<bool> stop_{false};
};

}  // namespace

TEST_CASE("a progress thread with CPUs of its own never changes class") {
  if (topo::cores_shared()) {
    MESSAGE("skipped: this process runs on one CPU");
    return;
  }
  ProgressEngine engine(EngineOptions{1, -1});
  const int tid = progress_thread_id(engine);
  std::this_thread::sleep_for(2ms);  // blocked by now, with nothing to do
  CHECK(sched_getscheduler(tid) == SCHED_OTHER);
}

TEST_CASE("where threads share CPUs: batch while idle, normal for requests and urgent work") {
  topo::note_machine_ranks(1024);  // more ranks than cores: cores_shared() from here on
  REQUIRE(topo::cores_shared());
  ProgressEngine engine(EngineOptions{1, -1});
  const int tid = progress_thread_id(engine);

  CHECK(eventually([&] { return sched_getscheduler(tid) == SCHED_BATCH; }));  // blocked, nothing active
  CHECK(on_engine(engine, [] { return sched_getscheduler(0); }) == SCHED_OTHER);  // a request switches back

  auto served = std::make_shared<WaitingPollable>(false);
  on_engine(engine, [&] { engine.activate(served); });
  CHECK(eventually([&] { return sched_getscheduler(tid) == SCHED_BATCH; }));  // sleeping between polls

  auto urgent = std::make_shared<WaitingPollable>(true);
  on_engine(engine, [&] { engine.activate(urgent); });
  std::this_thread::sleep_for(1ms);
  CHECK(sched_getscheduler(tid) == SCHED_OTHER);  // backs off for urgent work, never as batch

  urgent->stop();
  served->stop();
  CHECK(eventually([&] { return sched_getscheduler(tid) == SCHED_BATCH; }));
}
