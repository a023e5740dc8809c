// Sim tier: rooted and blockwise collectives (reduce, bcast, allgather,
// reduce_scatter) over threads-as-ranks — every algorithm of each catalogue,
// several roots — and long runs of rooted calls with changing roots and many
// in flight, the case the lane guard exists for (run under TSan in CI).
#include <doctest/doctest.h>

#include "../common/concat_op.hpp"
#include "../common/oracle.hpp"
#include "sim_support.hpp"

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/sim.hpp>

#include <array>
#include <chrono>
#include <thread>
#include <mutex>
#include <string>
#include <vector>

using namespace earlybird;
using coll::Collective;
using earlybird::testing::count_wrong;
using earlybird::testing::Failures;
using earlybird::testing::check_in_simulated_world;
using earlybird::testing::for_each_simulated_layout;
using earlybird::testing::wait_bounded;
using earlybird::testing::expected_value;
using earlybird::testing::make_input;

namespace {

CollectiveOptions named(std::string_view algorithm) {
  CollectiveOptions o;
  o.algorithm = std::string(algorithm);
  return o;
}

void check_rooted(SimWorld& world, Failures& failures) {
  const int p = world.size();
  for (int root : {0, p - 1, p / 2})
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, static_cast<std::size_t>(p + 1), std::size_t{3001}}) {
      for (const auto& a : coll::algorithms(Collective::reduce))
        world.run([&](int rank, Communicator& comm) {
          const std::string what = "reduce " + std::string(a.name) + " root=" + std::to_string(root) + " count=" + std::to_string(count);
          std::vector<double> in = make_input<double>(rank, count, Op::sum), out(count);
          wait_bounded(comm.reduce(std::span<double>(in), std::span<double>(out), Op::sum, root, named(a.name)), rank, what);
          if (rank == root && count_wrong(out, p, Op::sum)) failures.add(what + " wrong at the root");
        });
      for (const auto& a : coll::algorithms(Collective::bcast))
        world.run([&](int rank, Communicator& comm) {
          const std::string what = "bcast " + std::string(a.name) + " root=" + std::to_string(root) + " count=" + std::to_string(count);
          const auto source = make_input<std::int32_t>(root, count, Op::sum);
          std::vector<std::int32_t> buffer = rank == root ? source : std::vector<std::int32_t>(count, -7);
          wait_bounded(comm.bcast(std::span<std::int32_t>(buffer), root, named(a.name)), rank, what);
          if (buffer != source) failures.add(what + " wrong on rank " + std::to_string(rank));
        });
    }
}

// Allgather of rank-distinct blocks, out of place or in place: every block checked.
void check_allgather(Communicator& comm, std::string_view algorithm, std::size_t n, bool in_place,
                     const std::string& what, Failures& failures) {
  const int p = comm.size(), rank = comm.rank();
  const auto in = make_input<std::int64_t>(rank, n, Op::sum);
  std::vector<std::int64_t> out(n * static_cast<std::size_t>(p), -7);
  if (in_place) {
    std::copy(in.begin(), in.end(), out.begin() + static_cast<std::ptrdiff_t>(n * static_cast<std::size_t>(rank)));
    wait_bounded(comm.allgather(std::span<std::int64_t>(out), named(algorithm)), rank, what);
  } else {
    wait_bounded(comm.allgather(std::span<const std::int64_t>(in), std::span<std::int64_t>(out), named(algorithm)), rank,
                 what);
  }
  for (int j = 0; j < p; ++j)
    if (!std::equal(out.begin() + static_cast<std::ptrdiff_t>(n * static_cast<std::size_t>(j)),
                    out.begin() + static_cast<std::ptrdiff_t>(n * static_cast<std::size_t>(j + 1)),
                    make_input<std::int64_t>(j, n, Op::sum).begin()))
      failures.add(what + ": block " + std::to_string(j) + " wrong on rank " + std::to_string(rank));
}

// Reduce_scatter of rank-distinct inputs, out of place or in place (the
// result in the input's first n elements).
void check_reduce_scatter(Communicator& comm, std::string_view algorithm, std::size_t n, bool in_place,
                          const std::string& what, Failures& failures) {
  const int p = comm.size(), rank = comm.rank();
  auto in = make_input<std::int32_t>(rank, n * static_cast<std::size_t>(p), Op::sum);
  std::vector<std::int32_t> out(n, -7);
  if (in_place)
    wait_bounded(comm.reduce_scatter(std::span<std::int32_t>(in), Op::sum, named(algorithm)), rank, what);
  else
    wait_bounded(comm.reduce_scatter(std::span<const std::int32_t>(in), std::span<std::int32_t>(out), Op::sum,
                                     named(algorithm)),
                 rank, what);
  const std::int32_t* result = in_place ? in.data() : out.data();
  for (std::size_t i = 0; i < n; ++i)
    if (result[i] != expected_value<std::int32_t>(p, static_cast<std::size_t>(rank) * n + i, Op::sum)) {
      failures.add(what + " wrong on rank " + std::to_string(rank));
      break;
    }
}

// Every allgather and reduce_scatter algorithm, blocks of each of `counts`
// elements, out of place and in place.
void check_blockwise(SimWorld& world, const std::vector<std::size_t>& counts, Failures& failures) {
  for (std::size_t n : counts) {
    for (bool in_place : {false, true}) {
      const std::string how = std::string(in_place ? " in place" : "") + " n=" + std::to_string(n);
      for (const auto& a : coll::algorithms(Collective::allgather))
        world.run([&](int, Communicator& comm) {
          check_allgather(comm, a.name, n, in_place, "allgather " + std::string(a.name) + how, failures);
        });
      for (const auto& a : coll::algorithms(Collective::reduce_scatter))
        world.run([&](int, Communicator& comm) {
          check_reduce_scatter(comm, a.name, n, in_place, "reduce_scatter " + std::string(a.name) + how, failures);
        });
    }
  }
}

}  // namespace

TEST_CASE("reduce and bcast: every algorithm, several roots and counts") {
  for (int p : {1, 2, 3, 5}) {
    CAPTURE(p);
    SimWorld world(p);
    Failures failures;
    check_rooted(world, failures);
    failures.report();
  }
}

// Over nodes a root's rotation keeps the nodes whole (exec/binding.hpp):
// roots at a node's first position and inside a node.
TEST_CASE("reduce and bcast over simulated nodes: every algorithm, several roots") {
  for_each_simulated_layout({{4, 2}, {6, 2}, {6, 3}, {8, 4}},
                            [](SimWorld& world, int, Failures& failures) { check_rooted(world, failures); });
}

TEST_CASE("allgather and reduce_scatter: every algorithm") {
  for (int p : {1, 2, 3, 4, 5}) {
    CAPTURE(p);
    SimWorld world(p);
    Failures failures;
    check_blockwise(world, {0, 1, static_cast<std::size_t>(p) + 1, 513}, failures);
    failures.report();
  }
}

// Over nodes the hierarchical entries run their two levels (allgather_hierarchical,
// reduce_scatter_hierarchical); the others are unchanged.
TEST_CASE("allgather and reduce_scatter over simulated nodes: every algorithm") {
  for_each_simulated_layout({{4, 2}, {6, 2}, {6, 3}, {8, 4}}, [](SimWorld& world, int p, Failures& failures) {
    check_blockwise(world, {0, 1, static_cast<std::size_t>(p) + 1, 513}, failures);
  });
}

// Blocks whose P-fold exceeds a window lane: batches over the same element
// range of every block, the blocks strided in the user's buffers; over
// ranks reached directly and by messages.
TEST_CASE("allgather and reduce_scatter larger than the window run in batches") {
  for (bool by_messages : {false, true})
    for (int p : {1, 2, 3, 4, 5}) {
      SimOptions options;
      options.scratch_bytes = 4096;
      options.by_messages = by_messages;
      check_in_simulated_world(p, options, [](SimWorld& world, int, Failures& failures) {
        check_blockwise(world, {1500, 4099}, failures);
      });
    }
}

// Ranks reached directly and ranks reached as by messages (no direct
// windows: every collective runs as an Operation, exec/lane_guard.hpp).
TEST_CASE("rooted collectives back to back with changing roots, many in flight") {
  for (bool by_messages : {false, true})
    for (int p : {2, 3, 5}) {
      SimOptions options;
      options.by_messages = by_messages;
      check_in_simulated_world(p, options, [p](SimWorld& world, int, Failures& failures) {
        world.run([&](int rank, Communicator& comm) {
          constexpr int kCalls = 40;
          std::vector<std::vector<float>> buffers, inputs(kCalls), sums(kCalls);
          std::vector<Future> futures;
          for (int k = 0; k < kCalls; ++k) {
            const int root = (k * 3) % p;
            const std::size_t n = 64 + static_cast<std::size_t>(k);
            buffers.push_back(rank == root ? make_input<float>(root, n, Op::sum) : std::vector<float>(n, -1.0f));
            futures.push_back(comm.bcast(std::span<float>(buffers.back()), root));
            if (k % 4 != 3) continue;  // a reduce to another root every fourth call
            const auto i = static_cast<std::size_t>(k);
            inputs[i] = make_input<float>(rank, n, Op::sum);
            sums[i].resize(n);
            futures.push_back(comm.reduce(std::span<const float>(inputs[i]), std::span<float>(sums[i]), Op::sum, (root + 1) % p));
          }
          for (auto& f : futures) wait_bounded(f, rank, "rooted calls back to back");
          for (int k = 0; k < kCalls; ++k) {
            const auto i = static_cast<std::size_t>(k);
            if (buffers[i] != make_input<float>((k * 3) % p, buffers[i].size(), Op::sum))
              failures.add("bcast " + std::to_string(k) + " wrong on rank " + std::to_string(rank));
            if (k % 4 == 3 && rank == ((k * 3) % p + 1) % p && count_wrong(sums[i], p, Op::sum))
              failures.add("reduce after bcast " + std::to_string(k) + " wrong at its root");
          }
        });
      });
    }
}

// Every rooted algorithm over ranks reached as by messages: no inline lines
// or peer reads.
TEST_CASE("reduce and bcast over ranks reached by messages: every algorithm, several roots and counts") {
  SimOptions options;
  options.by_messages = true;
  for (int p : {2, 3})
    check_in_simulated_world(p, options,
                             [](SimWorld& world, int, Failures& failures) { check_rooted(world, failures); });
}

// Peer reads fold in rank order: a non-commutative operator gives the
// ranks' digits in rank order, for every reducing collective, in place and
// not.
TEST_CASE("peer reads keep rank order: concatenation through allreduce, reduce and reduce_scatter") {
  using earlybird::testing::concatenation;
  using earlybird::testing::digits;
  using earlybird::testing::ordered_concatenation;
  for (int p : {1, 2, 3, 5}) {
    CAPTURE(p);
    SimWorld world(p);
    Failures failures;
    const auto n = static_cast<std::size_t>(p) * 40001;  // folds span several 128 KiB chunks
    world.run([&](int rank, Communicator& comm) {
      const std::string who = " wrong on rank " + std::to_string(rank);
      auto v = digits(rank, n);
      wait_bounded(comm.allreduce(std::span<std::int64_t>(v), concatenation(), named("peer_reads")), rank, "allreduce");
      for (std::size_t i = 0; i < n; ++i)
        if (v[i] != ordered_concatenation(p, i)) {
          failures.add("allreduce in place" + who);
          break;
        }
      const int root = p - 1;
      const auto in = digits(rank, n);
      std::vector<std::int64_t> out(n, -1);
      wait_bounded(comm.reduce(std::span<const std::int64_t>(in), std::span<std::int64_t>(out), concatenation(), root,
                               named("peer_reads")),
                   rank, "reduce");
      for (std::size_t i = 0; rank == root && i < n; ++i)
        if (out[i] != ordered_concatenation(p, i)) {
          failures.add("reduce" + who);
          break;
        }
      const std::size_t block = n / static_cast<std::size_t>(p);
      std::vector<std::int64_t> mine(block, -1);
      wait_bounded(comm.reduce_scatter(std::span<const std::int64_t>(in), std::span<std::int64_t>(mine),
                                       concatenation(), named("peer_reads")),
                   rank, "reduce_scatter");
      for (std::size_t i = 0; i < block; ++i)
        if (mine[i] != ordered_concatenation(p, static_cast<std::size_t>(rank) * block + i)) {
          failures.add("reduce_scatter" + who);
          break;
        }
    });
    failures.report();
  }
}

// Peer reads and the inline lines share the eight inline lanes: calls of
// both, and of steps, submitted without waiting, rooted ones with changing
// roots (whose lane reuse is asked, not implied), all stay exact.
TEST_CASE("peer reads, inline lines and steps interleaved, many in flight") {
  for (int p : {2, 3, 5}) {
    CAPTURE(p);
    SimWorld world(p);
    Failures failures;
    world.run([&](int rank, Communicator& comm) {
      constexpr int kCalls = 48;
      constexpr std::array<std::string_view, 3> kAlgorithms{"peer_reads", "inline_flags", "binomial"};
      std::vector<std::vector<std::int32_t>> buffers;
      std::vector<Future> futures;
      for (int k = 0; k < kCalls; ++k) {
        const int root = (k * 3) % p;
        const std::size_t count = k % 2 ? 5 : 3000 + static_cast<std::size_t>(k);
        buffers.push_back(rank == root ? make_input<std::int32_t>(root, count, Op::sum)
                                       : std::vector<std::int32_t>(count, -1));
        const auto algorithm = kAlgorithms[static_cast<std::size_t>(k / 2) % kAlgorithms.size()];
        futures.push_back(comm.bcast(std::span<std::int32_t>(buffers.back()), root, named(algorithm)));
      }
      for (int k = 0; k < kCalls; ++k) {
        const auto i = static_cast<std::size_t>(k);
        wait_bounded(futures[i], rank, "bcast " + std::to_string(k));
        if (buffers[i] != make_input<std::int32_t>((k * 3) % p, buffers[i].size(), Op::sum))
          failures.add("bcast " + std::to_string(k) + " wrong on rank " + std::to_string(rank));
      }
    });
    failures.report();
  }
}

// The inline fast path keeps the tasks of the last four shapes it ran: a
// round of six shapes (four collectives, sums of one and of two values),
// rooted ones with a root that changes every round, every call waited, so
// that shapes' tasks are re-armed, replaced and built again; every result
// checked.
TEST_CASE("inline calls cycling through more shapes than the fast path keeps stay exact") {
  for (int p : {2, 3}) {
    CAPTURE(p);
    SimWorld world(p);
    Failures failures;
    world.run([&](int rank, Communicator& comm) {
      const CollectiveOptions lines = named("inline_flags");
      for (int k = 0; k < 36; ++k) {
        const std::string what = "call " + std::to_string(k) + ", shape " + std::to_string(k % 6);
        const int root = (k / 6) % p;
        if (k % 6 < 3) {  // allreduce of 1 and 2 values, reduce of 3
          const std::size_t count = static_cast<std::size_t>(k % 6) + 1;
          auto in = make_input<double>(rank, count, Op::sum);
          std::vector<double> out(count, -7);
          const bool rooted = k % 6 == 2;
          wait_bounded(rooted ? comm.reduce(std::span<double>(in), std::span<double>(out), Op::sum, root, lines)
                              : comm.allreduce(std::span<double>(in), std::span<double>(out), Op::sum, lines),
                       rank, what);
          if ((!rooted || rank == root) && count_wrong(out, p, Op::sum))
            failures.add(what + " wrong on rank " + std::to_string(rank));
        } else if (k % 6 == 3) {
          const auto source = make_input<std::int32_t>(root, 2, Op::sum);
          std::vector<std::int32_t> buffer = rank == root ? source : std::vector<std::int32_t>(2, -7);
          wait_bounded(comm.bcast(std::span<std::int32_t>(buffer), root, lines), rank, what);
          if (buffer != source) failures.add(what + " (bcast) wrong on rank " + std::to_string(rank));
        } else if (k % 6 == 4) {
          check_allgather(comm, "inline_flags", 1, false, what + " (allgather)", failures);
        } else {
          check_reduce_scatter(comm, "inline_flags", 2, false, what + " (reduce_scatter)", failures);
        }
      }
    });
    failures.report();
  }
}

// A commutative fold takes each rank's part as it publishes: with one rank
// late, the others' parts are folded first; the result stays exact.
TEST_CASE("peer reads with a late rank: commutative folds in arrival order stay exact") {
  for (int p : {3, 4}) {
    CAPTURE(p);
    SimWorld world(p);
    Failures failures;
    const std::size_t n = 70001;  // several 128 KiB chunks of int64
    world.run([&](int rank, Communicator& comm) {
      if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(30));
      const std::string who = " wrong on rank " + std::to_string(rank);
      auto v = make_input<std::int64_t>(rank, n, Op::sum);
      wait_bounded(comm.allreduce(std::span<std::int64_t>(v), Op::sum, named("peer_reads")), rank, "allreduce");
      if (count_wrong(v, p, Op::sum)) failures.add("allreduce" + who);
      const auto in = make_input<std::int64_t>(rank, n, Op::sum);
      std::vector<std::int64_t> out(n, -1);
      wait_bounded(comm.reduce(std::span<const std::int64_t>(in), std::span<std::int64_t>(out), Op::sum, 0,
                               named("peer_reads")),
                   rank, "reduce");
      if (rank == 0 && count_wrong(out, p, Op::sum)) failures.add("reduce" + who);
    });
    failures.report();
  }
}

// Calls that disagree on the root, or on which rooted collective it is,
// where every rank only publishes and none reads: two bcast roots, reduces
// whose roots are each other, a bcast root beside a reduce's non-root. No
// rank may return its buffer as if the call had matched: some rank fails,
// naming the mismatch (exec/silent_role.hpp) on the inline lines and in a
// tree; peer_reads' roots wait for their readers, so its watchdog fires.
TEST_CASE("rooted calls that disagree where no rank reads are reported, not silently done") {
  struct Case {
    const char* what;
    int ranks;
    bool bcast[3];  // per rank: bcast, else reduce
    int root[3];    // per rank
  };
  constexpr Case kCases[] = {
      {"bcast roots 0 and 1", 2, {true, true}, {0, 1}},
      {"bcast roots 0, 0 and 2", 3, {true, true, true}, {0, 0, 2}},
      {"reduce roots 1 and 0", 2, {false, false}, {1, 0}},
      {"bcast root 0 beside reduce root 0", 2, {true, false}, {0, 0}},
  };
  for (std::string_view algorithm : {"inline_flags", "binomial", "peer_reads"}) {
    for (const Case& c : kCases) {
      CAPTURE(algorithm);
      CAPTURE(c.what);
      SimOptions options;
      options.timeout = std::chrono::milliseconds(1000);
      SimWorld world(c.ranks, options);
      std::vector<std::string> errors(static_cast<std::size_t>(c.ranks));
      const std::size_t count = algorithm == "peer_reads" ? 5000 : 4;
      world.run([&](int rank, Communicator& comm) {
        const auto r = static_cast<std::size_t>(rank);
        std::vector<std::int32_t> in(count, rank + 1), out(count, -1);
        // Each rank calls its collective twice: a second call must not
        // complete the first's mismatch either.
        for (int call = 0; call < 2 && errors[r].empty(); ++call) {
          const Future f = c.bcast[r] ? comm.bcast(std::span<std::int32_t>(in), c.root[r], named(algorithm))
                                      : comm.reduce(std::span<const std::int32_t>(in), std::span<std::int32_t>(out),
                                                    Op::sum, c.root[r], named(algorithm));
          try {
            wait_bounded(f, rank, c.what);
          } catch (const Error& e) {
            errors[r] = e.what();
          }
        }
      });
      int failed = 0;
      bool named_mismatch = false;
      for (const std::string& e : errors) {
        failed += !e.empty();
        named_mismatch |= e.find("different collective") != std::string::npos;
      }
      CHECK(failed > 0);
      if (algorithm != "peer_reads") CHECK(named_mismatch);  // peer_reads: the watchdog, on a rank that waits
    }
  }
}
