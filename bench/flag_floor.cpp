// eb-flag-floor: what one round of an 8-byte allreduce at P = 2 can cost on
// this node at best — each rank stores its value and a sequence number into
// its own cache line of a shared window and spins on the peer's, nothing else
// (no schedule, no Future, no checks) — against MPI_Allreduce and earlybird's
// allreduce (auto, blocking) of one double in the same run. The lower bound of
// issue 11's "8 B at <= 0.8x Open MPI" (docs/benchmarks.md). Two ways:
//   back to back: rounds in a loop, time per round;
//   after a barrier: a barrier before each call, as eb-bench sweep times
//     calls; the median over calls of the slower rank's time.
// Run: mpirun -np 2 build/bench/eb-flag-floor
#include <earlybird/earlybird.hpp>

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include "barrier_timing.hpp"

namespace {

struct alignas(64) FlagLine {
  std::atomic<std::uint64_t> seq;
  double value[2];
};

// One round of the bare exchange: this rank's value out, the peer's in.
class FlagExchange {
 public:
  FlagExchange(FlagLine& mine, const FlagLine& peer) : mine_(&mine), peer_(&peer) {}
  double round(double value) {
    const std::uint64_t s = ++sequence_;
    mine_->value[s % 2] = value;
    mine_->seq.store(s, std::memory_order_release);
    while (peer_->seq.load(std::memory_order_acquire) < s) {
    }
    return value + peer_->value[s % 2];
  }

 private:
  FlagLine* mine_;
  const FlagLine* peer_;
  std::uint64_t sequence_ = 0;
};

// Microseconds per call of `rounds` calls in a row.
double back_to_back_us(const std::function<void()>& call, int rounds) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < rounds; ++i) call();
  return (MPI_Wtime() - t0) / rounds * 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  int wrong = 0;
  {
    earlybird::Runtime runtime(&argc, &argv);
    earlybird::Communicator world = runtime.world();
    const int rank = world.rank();
    if (world.size() != 2) {
      if (rank == 0) std::fprintf(stderr, "eb-flag-floor: run with exactly 2 ranks on one node\n");
      return 2;
    }
    FlagLine* mine = nullptr;
    MPI_Win win;
    MPI_Win_allocate_shared(sizeof(FlagLine), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win);
    MPI_Aint bytes = 0;
    int unit = 0;
    FlagLine* peer = nullptr;
    MPI_Win_shared_query(win, 1 - rank, &bytes, &unit, &peer);
    mine->seq.store(0);
    MPI_Barrier(MPI_COMM_WORLD);

    FlagExchange flags(*mine, *peer);
    const double x = rank + 1.0;  // the sum over both ranks is 3
    double y = 0;
    earlybird::CollectiveOptions blocking;
    blocking.blocking = true;
    const std::function<void()> calls[] = {
        [&] { y = flags.round(x); },
        [&] { MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); },
        [&] { world.allreduce(std::span<const double>(&x, 1), std::span<double>(&y, 1), earlybird::Op::sum, blocking).wait(); },
    };
    constexpr int kRounds = 50000;
    for (int repeat = 0; repeat < 3; ++repeat)
      for (bool barrier : {false, true}) {
        double us[3];
        for (int k = 0; k < 3; ++k) {
          y = 0;
          us[k] = barrier ? earlybird::bench::after_barrier_us([&](int) { calls[k](); }, kRounds / 5)
                          : back_to_back_us(calls[k], kRounds);
          if (y != 3) ++wrong;
        }
        if (rank == 0)
          std::printf("%-20s flag exchange %.3f us, MPI_Allreduce(8 B) %.3f us, earlybird %.3f us (%.2f of MPI)\n",
                      barrier ? "after a barrier:" : "back to back:", us[0], us[1], us[2], us[2] / us[1]);
      }
    if (rank == 0) std::printf("wrong: %d\n", wrong);
    MPI_Win_free(&win);
  }
  return wrong ? 1 : 0;
}
