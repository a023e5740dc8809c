// SimWorld: P ranks as threads in one process, each with its own progress
// engine, over an in-process transport. No MPI. The sim test tier uses it to
// exercise the real executor fast and under ThreadSanitizer; it is also handy
// for trying earlybird without mpirun.
#pragma once

#include <earlybird/communicator.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

namespace earlybird {

struct SimOptions {
  std::size_t scratch_bytes = 1u << 20;      // per lane, per rank
  std::chrono::milliseconds timeout{30000};  // collective watchdog
  int worker_threads = 1;                    // TBB workers per simulated rank
  // How long a small collective's calling thread drives it before the
  // progress thread takes over; 0: never caller-run (EARLYBIRD_CALLER_RUN_US).
  std::chrono::microseconds caller_run{20};
  // > 0: the simulated ranks lie on nodes of this many consecutive ranks (it
  // must divide the ranks), as a communicator spanning nodes would report:
  // the hierarchical algorithm and `auto`'s two-level model see them.
  int ranks_per_node = 0;
  // The simulated ranks reach each other as over the point-to-point
  // transport: no direct windows (so no inline lines or peer reads, and the
  // lane guard's questions go through the transport).
  bool by_messages = false;
  // EARLYBIRD_TUNE: the first `auto` call of each size class tunes the
  // class first with the model's `tune_candidates` fastest (0: all), timed
  // for `tune_budget`.
  bool tune = false;
  std::size_t tune_candidates = 4;
  std::chrono::milliseconds tune_budget{20};
};

class SimWorld {
 public:
  explicit SimWorld(int ranks, SimOptions options = {});
  ~SimWorld();
  SimWorld(const SimWorld&) = delete;
  SimWorld& operator=(const SimWorld&) = delete;

  int size() const;
  Communicator& communicator(int rank);
  // Runs body(rank, communicator) on one thread per rank and waits for all;
  // rethrows the first exception a rank threw.
  void run(const std::function<void(int, Communicator&)>& body);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace earlybird
