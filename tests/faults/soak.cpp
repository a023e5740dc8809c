// Soak and load (issue 14, item 3), under mpirun: several user threads per
// rank, each with communicators of its own (made by split and by adopting a
// duplicate of MPI_COMM_WORLD: collectives on one communicator must be
// called in the same order on every rank, so threads do not share one),
// submitting mixed collectives and sizes, up to four in flight, with random
// waits; every result checked against the oracle. Prints the collectives
// checked and the resident memory after the first round and at the end, and
// fails if memory grew by more than --max-growth-mib.
//
//   soak [--rounds N | --seconds S] [--threads T] [--comms C] [--max-growth-mib M]
#include "../common/oracle.hpp"

#include <earlybird/earlybird.hpp>

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace earlybird;
using earlybird::testing::count_wrong;
using earlybird::testing::input_value;
using earlybird::testing::make_input;

namespace {

struct Config {
  long rounds = 100;
  long seconds = 0;  // > 0: run this long instead of `rounds`
  int threads = 3;
  int comms = 2;  // per thread
  long max_growth_mib = 64;
};

long resident_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return 0;
}

// One in-flight collective and how to check it.
struct Pending {
  Future future;
  std::vector<std::int32_t> in, out;
  int kind = 0, root = 0;
};

// Submits a random collective on `comm`; its inputs are the oracle's.
Pending submit(Communicator& comm, std::mt19937& g) {
  Pending p;
  const int ranks = comm.size(), rank = comm.rank();
  const std::size_t n = std::vector<std::size_t>{1, 7, 100, 3000, 70000}[std::uniform_int_distribution<int>(0, 4)(g)];
  p.kind = std::uniform_int_distribution<int>(0, 3)(g);
  p.root = std::uniform_int_distribution<int>(0, ranks - 1)(g);
  switch (p.kind) {
    case 0:  // allreduce
      p.in = make_input<std::int32_t>(rank, n, Op::sum);
      p.out.assign(n, 0);
      p.future = comm.allreduce(std::span<const std::int32_t>(p.in), std::span<std::int32_t>(p.out), Op::sum);
      break;
    case 1:  // reduce
      p.in = make_input<std::int32_t>(rank, n, Op::sum);
      p.out.assign(n, 0);
      p.future = comm.reduce(std::span<const std::int32_t>(p.in), std::span<std::int32_t>(p.out), Op::sum, p.root);
      break;
    case 2:  // bcast
      p.out = rank == p.root ? make_input<std::int32_t>(p.root, n, Op::sum) : std::vector<std::int32_t>(n, -1);
      p.future = comm.bcast(std::span<std::int32_t>(p.out), p.root);
      break;
    default:  // allgather
      p.in = make_input<std::int32_t>(rank, n / 8 + 1, Op::sum);
      p.out.assign(p.in.size() * static_cast<std::size_t>(ranks), 0);
      p.future = comm.allgather(std::span<const std::int32_t>(p.in), std::span<std::int32_t>(p.out));
  }
  return p;
}

bool right(const Pending& p, const Communicator& comm) {
  const int ranks = comm.size();
  switch (p.kind) {
    case 0: return count_wrong(p.out, ranks, Op::sum) == 0;
    case 1: return comm.rank() != p.root || count_wrong(p.out, ranks, Op::sum) == 0;
    case 2: return p.out == make_input<std::int32_t>(p.root, p.out.size(), Op::sum);
    default:
      for (int j = 0; j < ranks; ++j)
        for (std::size_t i = 0; i < p.in.size(); ++i)
          if (p.out[static_cast<std::size_t>(j) * p.in.size() + i] != input_value<std::int32_t>(j, i, Op::sum)) return false;
      return true;
  }
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    const long value = std::stol(argv[i + 1]);
    if (name == "--rounds") config.rounds = value;
    else if (name == "--seconds") config.seconds = value;
    else if (name == "--threads") config.threads = static_cast<int>(value);
    else if (name == "--comms") config.comms = static_cast<int>(value);
    else if (name == "--max-growth-mib") config.max_growth_mib = value;
    else {
      std::fprintf(stderr, "soak: unknown option %s\n", name.c_str());
      return 2;
    }
  }
  Runtime runtime(&argc, &argv);
  int code = 0;
  {
    Communicator world = runtime.world();
    // Every thread's communicators, made in the same order on every rank.
    std::vector<std::vector<Communicator>> comms(static_cast<std::size_t>(config.threads));
    std::vector<MPI_Comm> duplicates;
    for (auto& mine : comms)
      for (int c = 0; c < config.comms; ++c) {
        if (c % 2 == 0) {
          mine.push_back(world.split(0, world.rank()));
        } else {
          MPI_Comm dup;
          MPI_Comm_dup(MPI_COMM_WORLD, &dup);
          duplicates.push_back(dup);
          mine.push_back(runtime.adopt(dup));
        }
      }
    std::atomic<long> checked{0}, wrong{0}, failed{0};
    long rss_after_first = 0;
    const auto start = std::chrono::steady_clock::now();
    auto more = [&](long round) {
      if (config.seconds > 0) return std::chrono::steady_clock::now() - start < std::chrono::seconds(config.seconds);
      return round < config.rounds;
    };
    // Rounds are aligned across ranks and threads by a barrier, so that
    // `--seconds` ends every rank at the same round.
    for (long round = 0;; ++round) {
      int go = more(round) ? 1 : 0;
      MPI_Allreduce(MPI_IN_PLACE, &go, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      if (!go) break;
      std::vector<std::thread> threads;
      for (int t = 0; t < config.threads; ++t)
        threads.emplace_back([&, t] {
          std::mt19937 g(static_cast<unsigned>(round * 7919 + t));  // the same on every rank
          std::mt19937 local(static_cast<unsigned>(round * 31 + t * 17 + world.rank()));  // waits differ
          for (Communicator& comm : comms[static_cast<std::size_t>(t)]) {
            std::vector<Pending> flight;
            const int calls = std::uniform_int_distribution<int>(1, 4)(g);
            for (int k = 0; k < calls; ++k) flight.push_back(submit(comm, g));
            std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(0, 300)(local)));
            for (auto& p : flight) {
              try {
                if (!p.future.wait_for(std::chrono::seconds(60))) {
                  std::fprintf(stderr, "WATCHDOG soak: rank %d stuck\n", world.rank());
                  MPI_Abort(MPI_COMM_WORLD, 3);
                }
                ++checked;
                if (!right(p, comm)) ++wrong;
              } catch (const std::exception& e) {
                ++failed;
                std::fprintf(stderr, "soak: rank %d: %s\n", world.rank(), e.what());
              }
            }
          }
        });
      for (auto& thread : threads) thread.join();
      if (round == 0) rss_after_first = resident_kib();
    }
    const long rss_end = resident_kib();
    long totals[3] = {checked.load(), wrong.load(), failed.load()};
    MPI_Allreduce(MPI_IN_PLACE, totals, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    long growth = rss_end - rss_after_first, worst_growth = 0;
    MPI_Allreduce(&growth, &worst_growth, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    const bool ok = totals[1] == 0 && totals[2] == 0 && worst_growth <= config.max_growth_mib * 1024;
    if (world.rank() == 0)
      std::printf("soak: P = %d, %d threads x %d communicators, %.0f s: %ld collectives checked, %ld wrong, %ld failed; "
                  "rank 0 resident memory %ld KiB after the first round, %ld KiB at the end (worst growth on any "
                  "rank %ld KiB): %s\n",
                  world.size(), config.threads, config.comms,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), totals[0], totals[1],
                  totals[2], rss_after_first, rss_end, worst_growth, ok ? "ok" : "FAILED");
    code = ok ? 0 : 1;
    comms.clear();
    for (MPI_Comm& dup : duplicates) MPI_Comm_free(&dup);
  }
  return code;
}
