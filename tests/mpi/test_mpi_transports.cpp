// MPI tier: the transports that carry messages (runtime/src/rma/
// p2p_transport.hpp, hybrid_transport.hpp) on their own, driven the way the
// progress thread drives them. The first three checks run on both; the
// hybrid transport's "nodes" are pairs of ranks when the job runs on one
// node (so a rank reaches its pair through memory and the others through
// messages, and rank 0's counter takes both kinds of fetch-add), the real
// nodes otherwise.
//   - puts (inline and with data in several pieces, the last one short) then
//     a notify arrive in order: the flag is never seen before the data it
//     follows; the same through put_notify (one request inline, put then
//     notify above kInlineBytes);
//   - requests that follow a large put apply after its data (the deferral
//     path; whether a request really arrives while the data is still being
//     received depends on MPI's timing: removing the deferral was not caught
//     on one node, over UCX or over ob1/tcp, because the sender's put waits
//     for its data to go out before it sends the next request);
//   - fetch-adds from every rank to rank 0 are atomic (every ticket once);
//   - get, remote reads and stores, and requests to this rank itself;
//   - two ranks waiting on each other through different communicators both
//     get their answers (a wait serves every open transport of the process);
//   - a wait for a rank that stops serving fails within the limit, naming it;
//     the answer it sends when it serves again is never taken for a later
//     request's (a request to it afterwards reads what it asked for).
#include "../../runtime/src/rma/hybrid_transport.hpp"
#include "../../runtime/src/rma/p2p_transport.hpp"
#include "mpi_check.hpp"

#include <earlybird/error.hpp>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

using namespace earlybird;
using earlybird::testing::JobDeadline;
using earlybird::testing::MpiCheck;
using earlybird::testing::rank_in;

namespace {

constexpr std::size_t kFlag = 0;         // a flag word per source rank: kFlag + 8 * source
constexpr std::size_t kCounter = 1024;   // rank 0's ticket counter
constexpr std::size_t kWords = 1032;     // 4 words read and written remotely
constexpr std::size_t kData = 4096;      // each source's data slot: kData + source * kSlot
constexpr std::size_t kSlot = 1024 * 1024;  // large enough for a rendezvous over TCP too

// Serves until `done` holds or `limit` passes; false on timeout.
template <class Done>
bool serve_until(Transport& t, Done done, std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    if (!t.poll_hook()) std::this_thread::yield();
  }
  return true;
}

// Serves `t` (and `also`, when given) until the nonblocking MPI call `request` completes.
bool serve_until_complete(Transport& t, MPI_Request& request, Transport* also = nullptr) {
  int done = 0;
  return serve_until(t, [&] {
    if (also) also->poll_hook();
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    return done != 0;
  });
}

std::vector<std::uint32_t> pattern(int rank, std::size_t words, std::uint32_t round) {
  std::vector<std::uint32_t> v(words);
  for (std::size_t i = 0; i < words; ++i) v[i] = static_cast<std::uint32_t>(rank) * 1000003u + round * 7919u + i;
  return v;
}

// Every rank puts to the next one: a small put, a flag, the largest inline
// put, a flag, a large put, a flag, for several rounds, then the same
// through put_notify. The receiver checks the data each flag vouches for.
void check_put_order(Transport& t, const std::string& name, MpiCheck& check) {
  const int next = (t.rank() + 1) % t.size(), previous = (t.rank() + t.size() - 1) % t.size();
  // 400 B inline; the largest inline put (kInlineBytes); just under 1 MiB:
  // data in 8 pieces (kDataPieceBytes), the last one short.
  const std::size_t sizes[] = {100, P2pTransport::kInlineBytes / 4, kSlot / 4 - 3};
  static_assert(kSlot % P2pTransport::kDataPieceBytes == 0 && kSlot > 4 * P2pTransport::kDataPieceBytes);
  for (std::uint32_t round = 1; round <= 12; ++round) {
    const std::size_t words = sizes[round % 3];
    const auto out = pattern(t.rank(), words, round);
    const std::size_t slot = kData + static_cast<std::size_t>(t.rank()) * kSlot;
    const std::size_t own_flag = kFlag + 8 * static_cast<std::size_t>(t.rank());
    if (round <= 6) {
      t.put(next, slot, out.data(), words * 4);
      t.notify(next, own_flag, round);
    } else {
      t.put_notify(next, slot, out.data(), words * 4, own_flag, round);
    }
    const std::size_t flag = kFlag + 8 * static_cast<std::size_t>(previous);
    const bool arrived = serve_until(t, [&] { return t.load_flag(flag) >= round; });
    check.expect(arrived, name + ": put order: flag of round " + std::to_string(round) + " arrived");
    if (!arrived) return;
    std::vector<std::uint32_t> in(words);
    std::memcpy(in.data(), t.window() + kData + static_cast<std::size_t>(previous) * kSlot, words * 4);
    check.expect(in == pattern(previous, words, round), name + ": put order: data of round " + std::to_string(round) +
                                                              " complete when its flag is seen");
    MPI_Barrier(MPI_COMM_WORLD);  // the slot is rewritten next round
  }
}

// Rank 0 is busy (not serving) while every other rank sends it a large put
// followed by small puts and a flag: they queue behind the data receive.
void check_deferred(Transport& t, const std::string& name, MpiCheck& check) {
  if (t.size() < 2) return;
  if (t.rank() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    bool all = serve_until(t, [&] {
      for (int r = 1; r < t.size(); ++r)
        if (t.load_flag(kFlag + 8 * static_cast<std::size_t>(r)) < 100) return false;
      return true;
    });
    check.expect(all, name + ": deferred: every rank's flag arrived");
    for (int r = 1; r < t.size() && all; ++r) {
      std::vector<std::uint32_t> in(kSlot / 4);
      std::memcpy(in.data(), t.window() + kData + static_cast<std::size_t>(r) * kSlot, kSlot);
      auto expected = pattern(r, kSlot / 4, 100);
      for (std::size_t i = 0; i < 10; ++i) expected[kSlot / 4 - 10 + i] = 42u + static_cast<std::uint32_t>(i);
      check.expect(in == expected, name + ": deferred: rank " + std::to_string(r) + "'s puts applied in order");
    }
  } else {
    const auto large = pattern(t.rank(), kSlot / 4, 100);
    const std::size_t slot = kData + static_cast<std::size_t>(t.rank()) * kSlot;
    t.put(0, slot, large.data(), kSlot);
    for (std::uint32_t i = 0; i < 10; ++i) {
      const std::uint32_t word = 42u + i;
      t.put(0, slot + kSlot - 40 + 4 * i, &word, 4);  // the large put's last words: right only if applied after it
    }
    t.notify(0, kFlag + 8 * static_cast<std::size_t>(t.rank()), 100);
  }
  check.expect(serve_until(t, [] { return true; }), name + ": deferred: done");
}

void check_atomics_and_reads(Transport& t, const std::string& name, MpiCheck& check) {
  constexpr int kTickets = 20;
  std::vector<std::uint64_t> mine;
  for (int i = 0; i < kTickets; ++i) mine.push_back(t.fetch_add(0, kCounter, 1));
  std::vector<std::uint64_t> all(static_cast<std::size_t>(kTickets * t.size()));
  // Rank 0 must keep serving while the others take tickets: gather with a nonblocking call.
  MPI_Request gathered;
  MPI_Iallgather(mine.data(), kTickets, MPI_UINT64_T, all.data(), kTickets, MPI_UINT64_T, MPI_COMM_WORLD, &gathered);
  serve_until_complete(t, gathered);
  std::sort(all.begin(), all.end());
  std::vector<std::uint64_t> expected(all.size());
  std::iota(expected.begin(), expected.end(), 0);
  check.expect(all == expected, name + ": fetch-add: every ticket taken exactly once");

  const int next = (t.rank() + 1) % t.size();
  // A posted store may return first, but it lands before this rank's next
  // operation on the target: the read after it sees it.
  const std::uint64_t words[4] = {11, 22, 33, 1000 + static_cast<std::uint64_t>(t.rank())};
  t.post_remote_words(next, kWords, words, 4);
  std::uint64_t back[4] = {};
  t.load_remote_words(next, kWords, back, 4);
  check.expect(back[0] == 11 && back[1] == 22 && back[2] == 33 && back[3] == words[3],
               name + ": posted store then read");
  std::uint32_t got[2] = {};
  t.get(t.rank(), kData, got, sizeof got);  // a request to this rank itself
  check.expect(t.load_remote(t.rank(), kCounter) == (t.rank() == 0 ? all.size() : 0), name + ": self read");
  MPI_Request barrier;
  MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
  serve_until_complete(t, barrier);
}

// Rank 0 reads rank 1's window through transport `a` while rank 1 reads rank
// 0's through `b`: each waits in one transport for an answer the other gives
// only if its wait serves the other transport too.
void check_crossed_waits(MPI_Comm comm, MpiCheck& check) {
  const auto [rank, size] = rank_in(comm);
  if (size < 2) return;
  P2pTransport a(comm, WindowSize{8192, 8192}, std::chrono::milliseconds(3000));
  P2pTransport b(comm, WindowSize{8192, 8192}, std::chrono::milliseconds(3000));
  std::string error;
  try {
    if (rank == 0) a.load_remote(1, 0);
    if (rank == 1) b.load_remote(0, 0);
  } catch (const Error& e) {
    error = e.what();
  }
  check.expect(error.empty(), "crossed waits on two communicators both answered: '" + error + "'");
  // Keep answering until the other rank has its answer too.
  MPI_Request barrier;
  MPI_Ibarrier(comm, &barrier);
  serve_until_complete(a, barrier, &b);
  a.close();
  b.close();
}

// The last rank stops serving; rank 0's read of its window fails in time.
// Then it serves again, answering that read late: rank 0's next read must
// get its own answer, not that one.
void check_silent_rank(MPI_Comm comm, MpiCheck& check) {
  const auto [rank, size] = rank_in(comm);
  if (size < 2) return;
  P2pTransport t(comm, WindowSize{8192, 8192}, std::chrono::milliseconds(500));
  const int silent = size - 1;
  if (rank == 0) {
    const auto start = std::chrono::steady_clock::now();
    std::string message;
    try {
      t.load_remote(silent, 0);
    } catch (const Error& e) {
      message = e.what();
    }
    const auto took = std::chrono::steady_clock::now() - start;
    check.expect(message.find("rank " + std::to_string(silent)) != std::string::npos,
                 "silent rank named: '" + message + "'");
    check.expect(took < std::chrono::seconds(3), "silent rank: the wait ended within its limit");
  }
  constexpr std::size_t kLate = 64;
  if (rank == silent) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    t.store_local(kLate, 0xABC);
    t.store_local(kLate + 8, 0xDEF);
  }
  MPI_Request barrier;
  MPI_Ibarrier(comm, &barrier);
  serve_until_complete(t, barrier);
  if (rank == 0) {
    std::uint64_t words[2] = {0, 0};
    std::string message;
    try {
      t.load_remote_words(silent, kLate, words, 2);
    } catch (const Error& e) {
      message = e.what();
    }
    check.expect(message.empty() && words[0] == 0xABC && words[1] == 0xDEF,
                 "after a late answer: the next read got its own answer ('" + message + "', " +
                     std::to_string(words[0]) + ", " + std::to_string(words[1]) + ")");
  }
  MPI_Ibarrier(comm, &barrier);
  serve_until_complete(t, barrier);
  t.close();
}

void check_transport(Transport& t, const std::string& name, MpiCheck& check) {
  check.expect(t.size() <= 8, name + ": at most 8 ranks (one data slot each in the window)");
  if (t.size() > 8) return t.close();
  check_put_order(t, name, check);
  check_deferred(t, name, check);
  check_atomics_and_reads(t, name, check);
  t.close();
}

// The hybrid transport's segments: pairs of ranks when the whole job runs on
// one node, the real nodes otherwise.
int segment_color() {
  const auto [rank, size] = rank_in(MPI_COMM_WORLD);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  const int node_size = rank_in(node).size;
  MPI_Comm_free(&node);
  return node_size == size ? rank / 2 : HybridTransport::kNodeSegments;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int code = 1;
  {
    const int rank = rank_in(MPI_COMM_WORLD).rank;
    JobDeadline deadline(rank, std::chrono::seconds(120));
    MpiCheck check(rank);
    const WindowSize window{kData + 8 * kSlot, kData + 8 * kSlot};
    {
      P2pTransport t(MPI_COMM_WORLD, window, std::chrono::seconds(60));
      check_transport(t, "p2p", check);
    }
    {
      config::CommOptions options;
      options.timeout = std::chrono::seconds(60);
      HybridTransport t(MPI_COMM_WORLD, window, options, segment_color());
      check_transport(t, "hybrid", check);
    }
    check_crossed_waits(MPI_COMM_WORLD, check);
    check_silent_rank(MPI_COMM_WORLD, check);
    code = check.finish("test_mpi_transports");
  }
  MPI_Finalize();
  return code;
}
