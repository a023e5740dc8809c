// eb-copy-paths: what moving one rank's buffer into another rank's buffer on
// one node costs by each path a node-level collective could take (issue 11,
// "copy-in once, or single-copy reads of a peer's user buffer with
// process_vm_readv — measure both"), against Open MPI's point-to-point in the
// same run (docs/benchmarks.md, "Copy paths on one node"):
//   two copies    the owner copies its private buffer into a shared window,
//                 raises a flag, the reader copies it out (earlybird's puts
//                 into a peer's scratch, then the copy into the user's buffer);
//   readv         the reader copies straight from the owner's private buffer
//                 with process_vm_readv (Linux cross-memory attach: one copy,
//                 one system call; needs ptrace permission over the owner);
//   MPI           MPI_Send / MPI_Recv (Open MPI's shared-memory transport:
//                 single copy above its eager limit where CMA is allowed).
// Rank 1 owns the data, rank 0 reads; both on one node, P = 2 exactly. Each
// row is the median of --reps rounds; every received buffer is checked.
// Run: mpirun -np 2 build/bench/eb-copy-paths [sizes in KiB ...]
#include <mpi.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kOwner = 1;
constexpr int kReader = 0;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int reps_for(std::size_t bytes) { return bytes >= (std::size_t{4} << 20) ? 31 : 201; }

// The byte every position holds in round `round`: a wrong or stale copy shows.
unsigned char pattern(std::size_t i, int round) { return static_cast<unsigned char>(i * 7 + round); }

void fill(std::vector<unsigned char>& buffer, int round) {
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = pattern(i, round);
}

bool holds(const std::vector<unsigned char>& buffer, int round) {
  for (std::size_t i = 0; i < buffer.size(); i += 61)
    if (buffer[i] != pattern(i, round)) return false;
  return buffer.empty() || buffer.back() == pattern(buffer.size() - 1, round);
}

struct Shared {
  std::atomic<std::uint64_t>* flag;  // in the owner's part: the round copied in
  unsigned char* data;               // the owner's part, after the flag's line
};

// Seconds per round at the reader, and the rounds it received wrong.
struct Row {
  double seconds = 0;
  int wrong = 0;
};

// `reps` rounds: the owner fills its buffer with round r's pattern, a
// barrier, then `move(r)` on both ranks (each does its part); the reader's
// time from the barrier, and whether `dst` then holds round r's data, where
// `move` returns true (false: nothing arrived to check). A closing barrier
// keeps the owner from refilling while the reader still copies.
template <class Move>
Row rounds(std::vector<unsigned char>& own, const std::vector<unsigned char>& dst, int rank, int reps, Move move) {
  std::vector<double> times;
  int wrong = 0;
  for (int r = 0; r < reps; ++r) {
    if (rank == kOwner) fill(own, r);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    const bool arrived = move(r);
    if (rank == kReader) {
      times.push_back(MPI_Wtime() - t0);
      wrong += arrived && !holds(dst, r);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  return {rank == kReader ? median(times) : 0, wrong};
}

Row two_copies(const Shared& shared, std::vector<unsigned char>& own, std::vector<unsigned char>& dst, int rank,
               int reps) {
  return rounds(own, dst, rank, reps, [&](int r) {
    const auto round = static_cast<std::uint64_t>(r) + 1;
    if (rank == kOwner) {
      std::memcpy(shared.data, own.data(), own.size());
      shared.flag->store(round, std::memory_order_release);
      return false;
    }
    while (shared.flag->load(std::memory_order_acquire) != round) {
    }
    std::memcpy(dst.data(), shared.data, dst.size());
    return true;
  });
}

// The owner publishes its pid and buffer address once; the reader copies
// with process_vm_readv, or says once that the kernel refused.
Row readv(std::vector<unsigned char>& own, std::vector<unsigned char>& dst, int rank, int reps, bool& refused) {
  std::int64_t where[2] = {static_cast<std::int64_t>(getpid()), reinterpret_cast<std::int64_t>(own.data())};
  MPI_Bcast(where, 2, MPI_INT64_T, kOwner, MPI_COMM_WORLD);
  int failed = 0;
  const Row row = rounds(own, dst, rank, reps, [&](int) {
    if (rank != kReader || failed) return false;
    iovec local{dst.data(), dst.size()};
    iovec remote{reinterpret_cast<void*>(where[1]), dst.size()};
    const ssize_t got = process_vm_readv(static_cast<pid_t>(where[0]), &local, 1, &remote, 1, 0);
    if (got == static_cast<ssize_t>(dst.size())) return true;
    std::printf("# process_vm_readv refused: %s\n", got < 0 ? std::strerror(errno) : "short read");
    failed = 1;
    return false;
  });
  MPI_Bcast(&failed, 1, MPI_INT, kReader, MPI_COMM_WORLD);
  refused = failed != 0;
  return refused ? Row{0, row.wrong} : row;
}

Row mpi_p2p(std::vector<unsigned char>& own, std::vector<unsigned char>& dst, int rank, int reps) {
  return rounds(own, dst, rank, reps, [&](int r) {
    const int n = static_cast<int>(own.size());
    if (rank == kOwner) {
      MPI_Send(own.data(), n, MPI_BYTE, kReader, r, MPI_COMM_WORLD);
      return false;
    }
    MPI_Recv(dst.data(), n, MPI_BYTE, kOwner, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return true;
  });
}

std::string cell(const Row& row, std::size_t bytes) {
  char text[48];
  std::snprintf(text, sizeof text, "%.1f (%.1f)", row.seconds * 1e6, static_cast<double>(bytes) / row.seconds / 1e9);
  return text;
}

std::vector<std::size_t> sizes_from(int argc, char** argv) {
  std::vector<std::size_t> kib;
  for (int i = 1; i < argc; ++i) kib.push_back(std::strtoull(argv[i], nullptr, 10));
  if (kib.empty()) kib = {64, 256, 1024, 4096, 16384};
  return kib;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  if (size != 2 || node_size != 2) {
    if (rank == 0) std::fprintf(stderr, "eb-copy-paths: run with exactly 2 ranks on one node\n");
    MPI_Finalize();
    return 1;
  }
#ifdef PR_SET_PTRACER
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);  // where Yama restricts ptrace to ancestors
#endif
  const std::vector<std::size_t> kib = sizes_from(argc, argv);
  const std::size_t largest = *std::max_element(kib.begin(), kib.end()) << 10;
  unsigned char* base = nullptr;
  MPI_Win win;
  MPI_Win_allocate_shared(static_cast<MPI_Aint>(rank == kOwner ? 64 + largest : 0), 1, MPI_INFO_NULL, node, &base,
                          &win);
  MPI_Aint owner_bytes = 0;
  int disp = 0;
  MPI_Win_shared_query(win, kOwner, &owner_bytes, &disp, &base);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  Shared shared{reinterpret_cast<std::atomic<std::uint64_t>*>(base), base + 64};
  if (rank == 0)
    std::printf("# eb-copy-paths: rank %d's private buffer into rank %d's, one node, P = 2; median us per copy "
                "(GB/s) at the reader\n%10s %20s %20s %20s %6s\n",
                kOwner, kReader, "KiB", "two copies", "readv", "MPI send/recv", "wrong");
  int total_wrong = 0;
  for (std::size_t k : kib) {
    const std::size_t bytes = k << 10;
    std::vector<unsigned char> own(bytes), dst(bytes);
    const int reps = reps_for(bytes);
    shared.flag->store(0);
    MPI_Barrier(MPI_COMM_WORLD);
    const Row two = two_copies(shared, own, dst, rank, reps);
    bool refused = false;
    const Row one = readv(own, dst, rank, reps, refused);
    const Row mpi = mpi_p2p(own, dst, rank, reps);
    const int wrong = two.wrong + one.wrong + mpi.wrong;
    total_wrong += wrong;
    if (rank == kReader)
      std::printf("%10zu %20s %20s %20s %6d\n", k, cell(two, bytes).c_str(),
                  refused ? "refused" : cell(one, bytes).c_str(), cell(mpi, bytes).c_str(), wrong);
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Comm_free(&node);
  MPI_Finalize();
  return total_wrong ? 2 : 0;
}
