// eb-shape-switch: small calls that switch between shapes (an allreduce of
// one value and of two, an allreduce and a bcast, a cycle of k counts), as a
// solver issues them, against MPI issuing the same sequence in the same run.
// Earlybird's inline fast path keeps the tasks of the last four shapes it ran
// (docs/design.md, "Execution"); a cycle through more shapes than that builds
// a task per call. Every call's result is checked.
//   back to back: the sequence in a loop, time per call;
//   after a barrier: a barrier before each call, the median over calls of
//     the slowest rank's time (as eb-bench sweep times calls).
// Run: mpirun -np P build/bench/eb-shape-switch [CALLS] (calls per pattern
// back to back, a fifth of them after a barrier; default 60000)
#include <earlybird/earlybird.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "barrier_timing.hpp"

namespace {

// One call of a sequence: an allreduce (sum) of `count` doubles, or a bcast
// of one double from rank 0 (count 0).
struct Shape {
  int count;
};

struct Pattern {
  const char* name;
  std::vector<Shape> shapes;
};

std::vector<Pattern> patterns() {
  return {{"one shape (allreduce of 1)", {{1}}},
          {"allreduce of 1, of 2", {{1}, {2}}},
          {"allreduce of 1, bcast of 1", {{1}, {0}}},
          {"allreduce of 1..4", {{1}, {2}, {3}, {4}}},
          {"allreduce of 1..6", {{1}, {2}, {3}, {4}, {5}, {6}}}};
}

// Runs call i of a pattern and checks its result: every rank contributes
// rank + 1 to each element, so a sum is P (P + 1) / 2; a bcast gives rank
// 0's 1.
class Caller {
 public:
  Caller(earlybird::Communicator& world, bool mpi) : world_(world), mpi_(mpi), in_(8), out_(8) {
    std::fill(in_.begin(), in_.end(), world.rank() + 1.0);
    blocking_.blocking = true;
  }
  void call(const Shape& shape) {
    const auto n = static_cast<std::size_t>(shape.count);
    if (shape.count == 0) {
      out_[0] = world_.rank() + 1.0;
      if (mpi_)
        MPI_Bcast(out_.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      else
        world_.bcast(std::span<double>(out_.data(), 1), 0, blocking_).wait();
      wrong_ += out_[0] != 1.0;
      return;
    }
    if (mpi_)
      MPI_Allreduce(in_.data(), out_.data(), shape.count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else
      world_.allreduce(std::span<const double>(in_.data(), n), std::span<double>(out_.data(), n),
                       earlybird::Op::sum, blocking_)
          .wait();
    const double sum = world_.size() * (world_.size() + 1) / 2.0;
    wrong_ += std::any_of(out_.begin(), out_.begin() + shape.count, [&](double v) { return v != sum; });
  }
  int wrong() const { return wrong_; }

 private:
  earlybird::Communicator& world_;
  bool mpi_;
  std::vector<double> in_, out_;
  earlybird::CollectiveOptions blocking_;
  int wrong_ = 0;
};

double back_to_back_us(Caller& caller, const Pattern& pattern, int calls) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < calls; ++i) caller.call(pattern.shapes[static_cast<std::size_t>(i) % pattern.shapes.size()]);
  double us = (MPI_Wtime() - t0) / calls * 1e6;
  MPI_Allreduce(MPI_IN_PLACE, &us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  int wrong = 0;
  {
    earlybird::Runtime runtime(&argc, &argv);
    earlybird::Communicator world = runtime.world();
    Caller mpi(world, true), earlybird(world, false);
    const int calls_per_pattern = argc > 1 ? std::max(5, std::atoi(argv[1])) : 60000;
    if (world.rank() == 0)
      std::printf("# eb-shape-switch, P = %d: us per call, earlybird (auto, blocking) against MPI, same run\n"
                  "%-28s %-14s %9s %9s %6s\n",
                  world.size(), "pattern", "timing", "MPI", "earlybird", "ratio");
    for (const Pattern& pattern : patterns())
      for (bool barrier : {false, true}) {
        const int calls = barrier ? calls_per_pattern / 5 : calls_per_pattern;
        double us[2];
        Caller* callers[2] = {&mpi, &earlybird};
        for (int k = 0; k < 2; ++k) {
          const auto call_i = [&](int i) {
            callers[k]->call(pattern.shapes[static_cast<std::size_t>(i) % pattern.shapes.size()]);
          };
          us[k] = barrier ? earlybird::bench::after_barrier_us(call_i, calls)
                          : back_to_back_us(*callers[k], pattern, calls);
        }
        if (world.rank() == 0)
          std::printf("%-28s %-14s %9.3f %9.3f %6.2f\n", pattern.name, barrier ? "after barrier" : "back to back",
                      us[0], us[1], us[1] / us[0]);
      }
    wrong = mpi.wrong() + earlybird.wrong();
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (world.rank() == 0) std::printf("# wrong results: %d\n", wrong);
  }
  return wrong ? 1 : 0;
}
