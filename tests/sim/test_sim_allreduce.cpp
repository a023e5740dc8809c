// Sim tier: the real executor and progress engines with threads as ranks over
// the in-process transport — every algorithm, P 1..8, count classes, types and
// ops, in place and not, back-to-back and concurrent calls, batching, errors.
#include <doctest/doctest.h>

#include "../common/oracle.hpp"
#include "sim_support.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/sim.hpp>

#include <chrono>
#include <atomic>
#include <mutex>
#include <thread>
#include <string>
#include <vector>

using namespace earlybird;
using earlybird::testing::count_wrong;
using earlybird::testing::Failures;
using earlybird::testing::for_each_simulated_layout;
using earlybird::testing::wait_bounded;
using earlybird::testing::make_input;

namespace {

template <class T>
void check_allreduce(SimWorld& world, const std::string& algorithm, std::size_t count, Op op, bool in_place,
                     Failures& failures, std::size_t segment_bytes = 0) {
  const std::string what = algorithm + " count=" + std::to_string(count) + " type=" +
                           to_string(datatype_of<T>()) + " op=" + to_string(op) +
                           (in_place ? " in place" : "") + " P=" + std::to_string(world.size()) +
                           (segment_bytes ? " segments of " + std::to_string(segment_bytes) + " B" : "");
  world.run([&](int rank, Communicator& comm) {
    std::vector<T> in = make_input<T>(rank, count, op);
    std::vector<T> out(count, T{});
    CollectiveOptions options;
    options.algorithm = algorithm;
    options.segment_bytes = segment_bytes;
    Future f = in_place ? comm.allreduce(std::span<T>(in), op, options)
                        : comm.allreduce(std::span<const T>(in), std::span<T>(out), op, options);
    wait_bounded(f, rank, what);
    const std::size_t wrong = count_wrong(in_place ? in : out, world.size(), op);
    if (wrong) failures.add(what + ": rank " + std::to_string(rank) + " has " + std::to_string(wrong) + " wrong elements");
  });
}

// The seven (type, op, in place) cases of one algorithm and count; case k of
// them when `only` is k.
void check_type_cases(SimWorld& world, const std::string& name, std::size_t count, bool in_place, Failures& failures,
                      int only = -1) {
  int k = 0;
  const auto wanted = [&] { return only < 0 || only == k++; };
  if (wanted()) check_allreduce<std::int32_t>(world, name, count, Op::sum, in_place, failures);
  if (wanted()) check_allreduce<double>(world, name, count, Op::sum, !in_place, failures);
  if (wanted()) check_allreduce<float>(world, name, count, Op::max, in_place, failures);
  if (wanted()) check_allreduce<std::uint8_t>(world, name, count, Op::bxor, !in_place, failures);
  if (wanted()) check_allreduce<std::int64_t>(world, name, count, Op::prod, in_place, failures);
  if (wanted()) check_allreduce<std::int16_t>(world, name, count, Op::land, in_place, failures);
  if (wanted()) check_allreduce<std::uint64_t>(world, name, count, Op::min, !in_place, failures);
}
constexpr int kTypeCases = 7;

// Waits (bounded) for in-place sum allreduces submitted in a row, call k into
// buffers[k], and records every wrong result as "rank r <what> k wrong".
template <class T>
void check_sums(std::vector<Future>& futures, const std::vector<std::vector<T>>& buffers, int p, int rank,
                const std::string& what, Failures& failures) {
  for (std::size_t k = 0; k < futures.size(); ++k) {
    wait_bounded(futures[k], rank, what + " " + std::to_string(k));
    if (count_wrong(buffers[k], p, Op::sum))
      failures.add("rank " + std::to_string(rank) + " " + what + " " + std::to_string(k) + " wrong");
  }
}

void check_all_cases(SimWorld& world, Failures& failures) {
  const int p = world.size();
  const std::vector<std::size_t> counts{0, 1, static_cast<std::size_t>(p > 1 ? p - 1 : 0),
                                        static_cast<std::size_t>(p), static_cast<std::size_t>(p + 1), 1000, 100003};
  std::vector<std::string> names = {"", "auto"};  // earlybird's choice, unnamed and named
  for (const auto& algorithm : coll::allreduce_algorithms()) names.emplace_back(algorithm.name);
  int variant = 0;
  for (const std::string& name : names)
    for (std::size_t count : counts) {
      const bool in_place = (variant % 2) == 1;
#ifdef EARLYBIRD_SANITIZED_TIER
      // 6-10x slower per case: one type case per (algorithm, count), in a
      // rotation shifted by one per algorithm, so every algorithm meets every
      // type over its 7 counts and every count class meets every type.
      const int shift = variant / static_cast<int>(counts.size());
      check_type_cases(world, name, count, in_place, failures, (variant + shift) % kTypeCases);
#else
      check_type_cases(world, name, count, in_place, failures);
#endif
      ++variant;
    }
}

}  // namespace

TEST_CASE("every algorithm gives the exact result for P = 1..8 and every count class") {
  for (int p : {1, 2, 3, 4, 5, 8}) {
    CAPTURE(p);
    SimWorld world(p);
    Failures failures;
    check_all_cases(world, failures);
    failures.report();
  }
}

TEST_CASE("over simulated nodes, hierarchical and auto give the exact result for every node layout") {
  // ranks x ranks per node: two nodes of two, three of two, two of four, one
  // rank per node (the network algorithm alone), one node (the ring).
  for_each_simulated_layout({{4, 2}, {6, 2}, {8, 4}, {3, 1}, {5, 5}}, [](SimWorld& world, int p, Failures& failures) {
    int variant = 0;
    for (const std::string name : {"hierarchical", "auto"})
      for (std::size_t count : {std::size_t{0}, std::size_t{1}, static_cast<std::size_t>(p + 1), std::size_t{1000},
                                std::size_t{100003}}) {
        const bool in_place = (variant++ % 2) == 1;
        check_allreduce<std::int32_t>(world, name, count, Op::sum, in_place, failures);
        check_allreduce<double>(world, name, count, Op::max, !in_place, failures);
        check_allreduce<std::uint8_t>(world, name, count, Op::bxor, in_place, failures);
        check_allreduce<std::int64_t>(world, name, count, Op::prod, !in_place, failures);
      }
  });
  // The hierarchical allreduce pipelined in small segments: many network
  // allreduces per chunk, overlapping the node phases.
  for_each_simulated_layout({{4, 2}, {6, 3}}, [](SimWorld& world, int p, Failures& failures) {
    for (std::size_t count : {std::size_t{1}, static_cast<std::size_t>(p + 1), std::size_t{10007}}) {
      check_allreduce<std::int32_t>(world, "hierarchical", count, Op::sum, false, failures, 4096);
      check_allreduce<double>(world, "hierarchical", count, Op::max, true, failures, 4096);
    }
  });
  SimOptions uneven;
  uneven.ranks_per_node = 3;
  CHECK_THROWS_AS(SimWorld(4, uneven), Error);
}

TEST_CASE("every type and operator, ring, recursive doubling and peer reads, P = 3") {
  SimWorld world(3);
  Failures failures;
  for (const char* algorithm : {"ring", "recursive_doubling", "peer_reads"})
    for (Op op : {Op::sum, Op::prod, Op::min, Op::max, Op::land, Op::lor, Op::lxor, Op::band, Op::bor, Op::bxor}) {
      check_allreduce<std::int8_t>(world, algorithm, 257, op, false, failures);
      check_allreduce<std::int16_t>(world, algorithm, 257, op, true, failures);
      check_allreduce<std::int32_t>(world, algorithm, 257, op, false, failures);
      check_allreduce<std::int64_t>(world, algorithm, 257, op, true, failures);
      check_allreduce<std::uint8_t>(world, algorithm, 257, op, false, failures);
      check_allreduce<std::uint16_t>(world, algorithm, 257, op, true, failures);
      check_allreduce<std::uint32_t>(world, algorithm, 257, op, false, failures);
      check_allreduce<std::uint64_t>(world, algorithm, 257, op, true, failures);
      if (op_supports(op, Datatype::float32)) {
        check_allreduce<float>(world, algorithm, 257, op, false, failures);
        check_allreduce<double>(world, algorithm, 257, op, true, failures);
      }
    }
  failures.report();
}

TEST_CASE("many collectives in flight on one communicator complete in submission order") {
  for (int p : {2, 4, 5}) {
    CAPTURE(p);
    SimWorld world(p);
    Failures failures;
    constexpr int kInFlight = 12;
    world.run([&](int rank, Communicator& comm) {
      std::vector<std::vector<std::int32_t>> buffers;
      std::vector<Future> futures;
      for (int k = 0; k < kInFlight; ++k) {
        buffers.push_back(make_input<std::int32_t>(rank, 100 + 37 * static_cast<std::size_t>(k), Op::sum));
        CollectiveOptions options;
        options.algorithm = std::string(coll::allreduce_algorithms()[static_cast<std::size_t>(k) % 3].name);
        futures.push_back(comm.allreduce(std::span<std::int32_t>(buffers.back()), Op::sum, options));
      }
      check_sums(futures, buffers, p, rank, "in-flight collective", failures);
    });
    failures.report();
  }
}

TEST_CASE("vectors larger than the window run in batches") {
  SimOptions options;
  options.scratch_bytes = 4096;
  SimWorld world(4, options);
  Failures failures;
  for (const auto& algorithm : coll::allreduce_algorithms())
    check_allreduce<double>(world, std::string(algorithm.name), 100003, Op::sum, false, failures);
  failures.report();
}

TEST_CASE("large reductions split across TBB workers stay exact") {
  SimOptions options;
  options.worker_threads = 2;
  options.scratch_bytes = 8u << 20;
  SimWorld world(2, options);
  Failures failures;
  check_allreduce<float>(world, "ring", 1u << 20, Op::sum, false, failures);
  check_allreduce<std::int32_t>(world, "recursive_doubling", 1u << 20, Op::sum, true, failures);
  failures.report();
}

TEST_CASE("bad arguments fail the future with the collective, rank and cause") {
  SimWorld world(2);
  world.run([&](int, Communicator& comm) {
    std::vector<float> v(8, 1.0f);
    CollectiveOptions unknown;
    unknown.algorithm = "no_such_algorithm";
    try {
      comm.allreduce(std::span<float>(v), Op::sum, unknown).wait();
      throw std::runtime_error("unknown algorithm accepted");
    } catch (const Error& e) {
      const std::string what = e.what();
      if (what.find("allreduce") == std::string::npos || what.find("rank") == std::string::npos ||
          what.find("unknown algorithm") == std::string::npos)
        throw std::runtime_error("unhelpful message: " + what);
    }
    try {
      comm.allreduce(std::span<float>(v), Op::bxor).wait();
      throw std::runtime_error("bxor on float accepted");
    } catch (const Error& e) {
      if (std::string(e.what()).find("bxor") == std::string::npos) throw std::runtime_error(e.what());
    }
    std::vector<float> shorter(4);
    CHECK_THROWS_AS(comm.allreduce(std::span<const float>(v), std::span<float>(shorter), Op::sum), Error);
    try {  // partially overlapping input and output
      comm.allreduce(v.data(), v.data() + 1, 4, Datatype::float32, Op::sum).wait();
      throw std::runtime_error("overlapping buffers accepted");
    } catch (const Error&) {
    }
  });
}

TEST_CASE("mismatched counts are reported, not silently reduced") {
  // ring: flags carry the signature; inline_flags (small, direct windows):
  // the data lines carry it; peer_reads: the published addresses' line does,
  // and a rank that gives up must not return (freeing its 1 MiB vector)
  // while a matching peer still reads it.
  for (const auto& [algorithm, count] :
       {std::pair<std::string, std::size_t>{"ring", 100}, {"inline_flags", 10}, {"peer_reads", 1 << 18}}) {
    CAPTURE(algorithm);
    SimOptions options;
    options.timeout = std::chrono::milliseconds(2000);
    SimWorld world(3, options);
    Failures failures;
    std::vector<std::string> errors(3);
    world.run([&](int rank, Communicator& comm) {
      std::vector<std::int32_t> v(rank == 1 ? count + 2 : count, 1);
      CollectiveOptions named;
      named.algorithm = algorithm;
      Future f = comm.allreduce(std::span<std::int32_t>(v), Op::sum, named);
      try {
        wait_bounded(f, rank, "mismatched allreduce");
        failures.add("rank " + std::to_string(rank) + " completed a mismatched allreduce");
      } catch (const Error& e) {
        errors[static_cast<std::size_t>(rank)] = e.what();
      }
    });
    failures.report();
    bool named_mismatch = false;
    for (const auto& e : errors) named_mismatch |= e.find("different collective") != std::string::npos;
    CHECK(named_mismatch);
  }
}

// A count that puts one rank's call in a small lane and the others' in a
// large one (runtime/src/rma/window_layout.hpp): no flag reaches the lane
// its reader waits on, so the watchdog fails every rank; none completes.
TEST_CASE("mismatched counts in lanes of different kinds fail on every rank") {
  SimOptions options;
  options.timeout = std::chrono::milliseconds(1000);
  options.by_messages = true;  // no inline lines: every call runs on lanes
  SimWorld world(3, options);
  std::vector<std::string> errors(3);
  world.run([&](int rank, Communicator& comm) {
    std::vector<std::int32_t> v(rank == 1 ? 100 : 100000, 1);
    CollectiveOptions ring;
    ring.algorithm = "ring";
    try {
      wait_bounded(comm.allreduce(std::span<std::int32_t>(v), Op::sum, ring), rank, "mismatched allreduce");
    } catch (const Error& e) {
      errors[static_cast<std::size_t>(rank)] = e.what();
    }
  });
  for (int rank = 0; rank < 3; ++rank) {
    CAPTURE(rank);
    CHECK_FALSE(errors[static_cast<std::size_t>(rank)].empty());
  }
}

TEST_CASE("a rank that never arrives trips the watchdog, which names it") {
  for (const auto& [algorithm, count] :
       {std::pair<std::string, std::size_t>{"ring", 64}, {"inline_flags", 5}, {"peer_reads", 1000}}) {
    CAPTURE(algorithm);
    SimOptions options;
    options.timeout = std::chrono::milliseconds(500);
    SimWorld world(3, options);
    std::vector<std::string> errors(3);
    world.run([&](int rank, Communicator& comm) {
      if (rank == 2) return;
      std::vector<double> v(count, 1.0);
      CollectiveOptions named;
      named.algorithm = algorithm;
      try {
        wait_bounded(comm.allreduce(std::span<double>(v), Op::sum, named), rank, "watchdog test");
      } catch (const Error& e) {
        errors[static_cast<std::size_t>(rank)] = e.what();
      }
    });
    for (int r : {0, 1}) {
      CAPTURE(errors[static_cast<std::size_t>(r)]);
      CHECK(errors[static_cast<std::size_t>(r)].find("watchdog") != std::string::npos);
    }
    // Rank 0's ring predecessor is rank 2, and every rank reads rank 2's
    // inline lines or buffers: the error must name the missing rank.
    CHECK(errors[0].find("rank 2") != std::string::npos);
  }
}

TEST_CASE("then() runs after completion and carries errors") {
  SimWorld world(2);
  world.run([&](int rank, Communicator& comm) {
    std::vector<std::int32_t> v = make_input<std::int32_t>(rank, 1000, Op::sum);
    std::atomic<bool> ran{false};
    Future next = comm.allreduce(std::span<std::int32_t>(v), Op::sum).then([&] {
      if (count_wrong(v, 2, Op::sum)) throw std::runtime_error("continuation saw a wrong result");
      ran = true;
    });
    wait_bounded(next, rank, "then");
    if (!ran) throw std::runtime_error("continuation did not run");
    CollectiveOptions bad;
    bad.algorithm = "nope";
    Future failed = comm.allreduce(std::span<std::int32_t>(v), Op::sum, bad).then([] {});
    bool threw = false;
    try {
      wait_bounded(failed, rank, "then after error");
    } catch (const Error&) {
      threw = true;
    }
    if (!threw) throw std::runtime_error("then() swallowed the error");
  });
}

TEST_CASE("small collectives give the same results with caller-run off (every one through the progress thread)") {
  SimOptions options;
  options.caller_run = std::chrono::microseconds(0);
  for (int p : {1, 2, 3, 5}) {
    CAPTURE(p);
    SimWorld world(p, options);
    Failures failures;
    for (const auto& algorithm : coll::allreduce_algorithms())
      for (std::size_t count : {std::size_t{0}, std::size_t{1}, static_cast<std::size_t>(p + 1), std::size_t{1000}}) {
        check_allreduce<double>(world, std::string(algorithm.name), count, Op::sum, count % 2 == 1, failures);
        check_allreduce<std::int32_t>(world, std::string(algorithm.name), count, Op::max, false, failures);
      }
    failures.report();
  }
}

// Caller-run hand-over: ranks arrive up to a few milliseconds apart, so a
// caller's budget often runs out and the progress thread (or the waiter)
// finishes the collective; every result must stay exact.
TEST_CASE("caller-run collectives with late ranks hand over and stay exact") {
  for (int p : {2, 4}) {
    CAPTURE(p);
    SimWorld world(p);
    Failures failures;
    world.run([&](int rank, Communicator& comm) {
      for (int k = 0; k < 60; ++k) {
        if ((k + rank) % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50 * ((k * 7 + rank) % 40)));
        std::vector<std::int64_t> v = make_input<std::int64_t>(rank, 1 + static_cast<std::size_t>(k % 9), Op::sum);
        Future f = comm.allreduce(std::span<std::int64_t>(v), Op::sum);
        if (k % 4 == 1) std::this_thread::sleep_for(std::chrono::microseconds(200));  // not waiting at once
        wait_bounded(f, rank, "late-rank round " + std::to_string(k));
        if (count_wrong(v, p, Op::sum)) failures.add("rank " + std::to_string(rank) + " round " + std::to_string(k) + " wrong");
      }
    });
    failures.report();
  }
}

// The inline fast path (an InlineCollective kept in place for each of the
// last four inline shapes): calls of six alternating shapes (more than it
// keeps, so shapes are replaced too) submitted without waiting, one rank
// often late, so that some calls finish on the caller, some are handed over
// to the progress thread and the ones behind them queue.
TEST_CASE("inline calls submitted without waiting, with a late rank, stay exact and in order") {
  constexpr int kCalls = 48;
  for (int p : {2, 3}) {
    CAPTURE(p);
    SimWorld world(p);
    Failures failures;
    world.run([&](int rank, Communicator& comm) {
      std::vector<std::vector<std::int64_t>> buffers;
      std::vector<Future> futures;
      buffers.reserve(kCalls);
      for (int k = 0; k < kCalls; ++k) {
        if (rank == p - 1 && k % 5 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
        buffers.push_back(make_input<std::int64_t>(rank, 1 + static_cast<std::size_t>(k % 6), Op::sum));
        futures.push_back(comm.allreduce(std::span<std::int64_t>(buffers.back()), Op::sum));
      }
      check_sums(futures, buffers, p, rank, "unwaited inline call", failures);
    });
    failures.report();
  }
}

// CollectiveOptions::blocking: a call of any size runs on the caller when the
// communicator is idle. With a long caller-run budget and every rank on time
// it is complete when it returns; with TBB workers taking its large copies
// and reductions, one rank late (hand-over) and an unwaited future queued
// ahead of it (it must wait its turn), every result stays exact.
TEST_CASE("blocking calls of any size run on the caller and stay exact") {
  constexpr std::size_t kLarge = 300000;  // 2.4 MB of doubles: over the 64 KiB of non-blocking caller-run
  CollectiveOptions blocking;
  blocking.blocking = true;
  SUBCASE("on time, a long budget: complete on return") {
    SimOptions options;
    options.caller_run = std::chrono::seconds(10);
    options.scratch_bytes = 8u << 20;  // one batch
    SimWorld world(3, options);
    Failures failures;
    world.run([&](int rank, Communicator& comm) {
      for (int k = 0; k < 3; ++k) {
        std::vector<double> v = make_input<double>(rank, kLarge + static_cast<std::size_t>(k), Op::sum);
        Future f = comm.allreduce(std::span<double>(v), Op::sum, blocking);
        if (!f.ready()) failures.add("rank " + std::to_string(rank) + " call " + std::to_string(k) + " not complete on return");
        wait_bounded(f, rank, "blocking call " + std::to_string(k));
        if (count_wrong(v, 3, Op::sum)) failures.add("rank " + std::to_string(rank) + " call " + std::to_string(k) + " wrong");
      }
      const auto source = make_input<std::int32_t>(1, kLarge, Op::sum);
      std::vector<std::int32_t> buffer = rank == 1 ? source : std::vector<std::int32_t>(kLarge, -7);
      Future f = comm.bcast(std::span<std::int32_t>(buffer), 1, blocking);
      if (!f.ready()) failures.add("rank " + std::to_string(rank) + " bcast not complete on return");
      wait_bounded(f, rank, "blocking bcast");
      if (buffer != source) failures.add("rank " + std::to_string(rank) + " bcast wrong");
    });
    failures.report();
  }
  SUBCASE("late ranks, TBB workers, a queued future ahead") {
    SimOptions options;
    options.worker_threads = 2;
    options.scratch_bytes = 8u << 20;
    for (int p : {2, 3}) {
      CAPTURE(p);
      SimWorld world(p, options);
      Failures failures;
      world.run([&](int rank, Communicator& comm) {
        for (int k = 0; k < 8; ++k) {
          if (rank == k % p) std::this_thread::sleep_for(std::chrono::microseconds(300 * (k % 3)));
          std::vector<std::vector<double>> buffers;
          buffers.reserve(2);
          std::vector<Future> futures;
          if (k % 2 == 1) {  // a plain future first: the blocking call queues behind it
            buffers.push_back(make_input<double>(rank, kLarge, Op::sum));
            futures.push_back(comm.allreduce(std::span<double>(buffers.back()), Op::sum));
          }
          buffers.push_back(make_input<double>(rank, kLarge + static_cast<std::size_t>(k), Op::sum));
          futures.push_back(comm.allreduce(std::span<double>(buffers.back()), Op::sum, blocking));
          check_sums(futures, buffers, p, rank, "round " + std::to_string(k) + " call", failures);
        }
      });
      failures.report();
    }
  }
}

// Two user threads per rank share one communicator and take turns to submit
// (collectives must be called in the same order on every rank): one submits
// large collectives (queued to the progress thread), the other small ones
// (caller-run candidates that must queue behind the large ones). Each thread
// waits for its own futures.
TEST_CASE("caller-run and queued collectives from two user threads on one communicator") {
  constexpr int kRounds = 20;
  for (int p : {2, 3}) {
    CAPTURE(p);
    SimWorld world(p);
    Failures failures;
    world.run([&](int rank, Communicator& comm) {
      std::atomic<int> turn{0};
      auto take_turn = [&](int mine) {
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (turn.load() != mine) {
          if (std::chrono::steady_clock::now() > give_up) throw std::runtime_error("turn never came");
          std::this_thread::yield();
        }
      };
      auto submitter = [&](bool large) {
        std::vector<std::vector<double>> buffers;
        std::vector<Future> futures;
        for (int k = 0; k < kRounds; ++k) {
          const int mine = 2 * k + (large ? 0 : 1);
          take_turn(mine);
          buffers.push_back(make_input<double>(rank, large ? 50000 + static_cast<std::size_t>(k) : 3 + static_cast<std::size_t>(k), Op::sum));
          futures.push_back(comm.allreduce(std::span<double>(buffers.back()), Op::sum));
          turn.store(mine + 1);
        }
        check_sums(futures, buffers, p, rank, large ? "large" : "small", failures);
      };
      auto guarded = [&](bool large) {
        try {
          submitter(large);
        } catch (const std::exception& e) {
          failures.add("rank " + std::to_string(rank) + (large ? " large" : " small") + " thread: " + e.what());
        }
      };
      std::thread small(guarded, false);
      guarded(true);
      small.join();
    });
    failures.report();
  }
}

// The completion callback runs on the thread that completed the collective,
// often the progress thread holding the communicator's drive: a collective it
// submits there is queued, not run on the spot.
TEST_CASE("a collective submitted from a completion callback on the same communicator completes") {
  SimWorld world(3);
  Failures failures;
  world.run([&](int rank, Communicator& comm) {
    std::vector<std::int32_t> large = make_input<std::int32_t>(rank, 40000, Op::sum);
    std::vector<std::int32_t> small = make_input<std::int32_t>(rank, 5, Op::sum);
    std::promise<Future> chained;
    Future first = comm.allreduce(std::span<std::int32_t>(large), Op::sum);
    first.on_complete([&](std::exception_ptr) { chained.set_value(comm.allreduce(std::span<std::int32_t>(small), Op::sum)); });
    wait_bounded(first, rank, "first allreduce");
    auto second = chained.get_future();
    if (second.wait_for(std::chrono::seconds(60)) != std::future_status::ready) throw std::runtime_error("callback never ran");
    wait_bounded(second.get(), rank, "allreduce submitted from the callback");
    if (count_wrong(large, 3, Op::sum) || count_wrong(small, 3, Op::sum))
      failures.add("rank " + std::to_string(rank) + " wrong");
  });
  failures.report();
}
