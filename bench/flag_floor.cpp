// eb-flag-floor: what one round of an 8-byte allreduce at P = 2 can cost on
// this node at best — each rank stores its value and a sequence number into
// its own cache line of a shared window and spins on the peer's, nothing else
// (no schedule, no Future, no checks) — against MPI_Allreduce of one double
// in the same run. The lower bound of issue 11's "8 B at <= 0.8x Open MPI"
// (docs/benchmarks.md). Run: mpirun -np 2 build/bench/eb-flag-floor
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>

namespace {

// One writer: its owner. value[s % 2] holds round s's contribution, so the
// owner's next store never overwrites what the peer may still be reading.
struct alignas(64) FlagLine {
  std::atomic<std::uint64_t> seq;
  double value[2];
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// `rounds` flag exchanges; returns the sum over rounds (checked by the caller).
double exchange(FlagLine& mine, const FlagLine& peer, int rank, std::uint64_t first, int rounds) {
  double total = 0;
  for (int i = 0; i < rounds; ++i) {
    const std::uint64_t s = first + static_cast<std::uint64_t>(i);
    mine.value[s % 2] = rank + static_cast<double>(i);
    mine.seq.store(s, std::memory_order_release);
    while (peer.seq.load(std::memory_order_acquire) < s) {
    }
    total += mine.value[s % 2] + peer.value[s % 2];
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "eb-flag-floor: run with exactly 2 ranks on one node\n");
    MPI_Finalize();
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
  constexpr int kRounds = 200000;
  std::uint64_t next = 1;
  int wrong = 0;
  for (int repeat = 0; repeat < 5; ++repeat) {
    const auto start = std::chrono::steady_clock::now();
    const double total = exchange(*mine, *peer, rank, next, kRounds);
    const double flags_us = seconds_since(start) / kRounds * 1e6;
    next += kRounds;
    // sum over i of (0 + i) + (1 + i) = kRounds^2: exact in a double
    if (total != static_cast<double>(kRounds) * kRounds) ++wrong;
    MPI_Barrier(MPI_COMM_WORLD);
    double x = 1, y = 0;
    const auto mpi_start = std::chrono::steady_clock::now();
    for (int i = 0; i < kRounds / 4; ++i) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const double mpi_us = seconds_since(mpi_start) / (kRounds / 4) * 1e6;
    if (y != 2) ++wrong;
    if (rank == 0)
      std::printf("flag exchange %.3f us, MPI_Allreduce(8 B) %.3f us, ratio %.2f\n", flags_us, mpi_us,
                  flags_us / mpi_us);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (rank == 0) std::printf("wrong: %d\n", wrong);
  MPI_Win_free(&win);
  MPI_Finalize();
  return wrong ? 1 : 0;
}
