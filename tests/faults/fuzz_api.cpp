// Hostile input through the C++ API (issue 14, item 2), on the sim transport:
// seeded random collectives — any collective, count, type, operator, root,
// algorithm name, segment and fan-out options, in place, null or partially
// overlapping buffers — and, one case in eight, one rank calling with a
// different count, operator or algorithm. Every rank of every case must end
// with the right result (checked against the oracle wherever the oracle is
// exact) or an earlybird::Error, within the watchdog's timeout + 2 s; never
// a crash, a hang or (in the ASan build) a sanitizer report.
//
//   fuzz_api [--cases N] [--seed S] [--verbose]
//     cases S .. S+N-1 (default 300 from 1); --verbose prints every case and
//     what each rank's call ended in
// A failing case prints its seed; rerun it alone with --cases 1 --seed SEED.
#include "../common/oracle.hpp"

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/sim.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace earlybird;
using coll::Collective;

namespace {

constexpr auto kTimeout = std::chrono::milliseconds(300);
// A case whose rank threads have not all returned by then hangs. Generous:
// a call may legitimately spend seconds preparing before its Future exists
// (1-byte segments over 20000 elements at P = 5: 1.4 s, 15 s under ASan).
constexpr auto kCaseLimit = std::chrono::seconds(120);
// Cases slower than this are counted and listed in the summary.
constexpr auto kSlowCase = std::chrono::seconds(5);

enum class Buffers { separate, in_place, null_input, null_output, overlapping };

struct Call {
  Collective collective = Collective::allreduce;
  std::size_t count = 0;
  Datatype type = Datatype::int32;
  Op op = Op::sum;
  int root = 0;
  std::string algorithm;  // empty: earlybird's choice
  std::size_t segment_bytes = 0;
  int fanout = 0;
  Buffers buffers = Buffers::separate;
};

template <class T>
T pick(std::mt19937_64& g, std::initializer_list<T> choices) {
  return *(choices.begin() + std::uniform_int_distribution<std::size_t>(0, choices.size() - 1)(g));
}

std::string random_algorithm(std::mt19937_64& g, Collective c) {
  const auto all = coll::algorithms(c);
  const int roll = std::uniform_int_distribution<int>(0, 9)(g);
  if (roll < 4) return "";
  if (roll == 4) return pick<std::string>(g, {"no_such_algorithm", "RING", " ring", "ring\n"});
  if (roll == 5) {  // another collective's name
    const auto other = coll::algorithms(pick(g, {Collective::allreduce, Collective::bcast, Collective::allgather}));
    return std::string(other[std::uniform_int_distribution<std::size_t>(0, other.size() - 1)(g)].name);
  }
  return std::string(all[std::uniform_int_distribution<std::size_t>(0, all.size() - 1)(g)].name);
}

Call draw(std::mt19937_64& g, int ranks) {
  Call c;
  c.collective = pick(g, {Collective::allreduce, Collective::reduce, Collective::bcast, Collective::allgather,
                          Collective::reduce_scatter});
  c.count = pick<std::size_t>(g, {0, 1, 2, 7, 64, 513, 4099, 20000});
  c.type = static_cast<Datatype>(std::uniform_int_distribution<int>(0, 9)(g));
  c.op = static_cast<Op>(std::uniform_int_distribution<int>(0, 9)(g));
  c.root = std::uniform_int_distribution<int>(0, 9)(g) == 0 ? pick(g, {-1, ranks, ranks + 5}) : std::uniform_int_distribution<int>(0, ranks - 1)(g);
  c.algorithm = random_algorithm(g, c.collective);
  c.segment_bytes = pick<std::size_t>(g, {0, 0, 0, 1, 7, 64, 4096, 1u << 30});
  c.fanout = pick(g, {0, 0, 0, -3, 1, 2, 3, 1000});
  const int roll = std::uniform_int_distribution<int>(0, 19)(g);
  c.buffers = roll < 12 ? Buffers::separate : roll < 16 ? Buffers::in_place : roll == 16 ? Buffers::null_input
              : roll == 17 ? Buffers::null_output : Buffers::overlapping;
  return c;
}

// One rank's version of a mismatched call.
void perturb(Call& c, std::mt19937_64& g) {
  switch (std::uniform_int_distribution<int>(0, 2)(g)) {
    case 0: c.count += 1 + c.count; break;
    case 1: c.op = static_cast<Op>((static_cast<int>(c.op) + 1) % 10); break;
    default: c.algorithm = c.algorithm.empty() ? "ring" : ""; break;
  }
}

// The (type, operator) pairs MPI defines: every operator on integers,
// arithmetic and min/max on floating point. The oracle's inputs make every
// such result exact.
bool exact(Datatype type, Op op) {
  const bool floating = type == Datatype::float32 || type == Datatype::float64;
  return !floating || op == Op::sum || op == Op::prod || op == Op::min || op == Op::max;
}

template <class F>
void with_type(Datatype type, F&& f) {
  switch (type) {
    case Datatype::int8: return f(std::int8_t{});
    case Datatype::int16: return f(std::int16_t{});
    case Datatype::int32: return f(std::int32_t{});
    case Datatype::int64: return f(std::int64_t{});
    case Datatype::uint8: return f(std::uint8_t{});
    case Datatype::uint16: return f(std::uint16_t{});
    case Datatype::uint32: return f(std::uint32_t{});
    case Datatype::uint64: return f(std::uint64_t{});
    case Datatype::float32: return f(float{});
    case Datatype::float64: return f(double{});
  }
}

struct Outcome {
  enum Kind { ok, error, hang, other_exception } kind = ok;
  std::string text;
  bool result_checked = false;
  bool result_right = true;
};

// Runs `call` on `comm` as rank `rank` of `p` (`comm` is the world's
// communicator, or a moved-from one): buffers sized for the call's shape,
// filled with the oracle's inputs where it is exact; checks the result when
// it succeeded.
Outcome run_call(Communicator& comm, int p, int rank, const Call& call, bool check_result) {
  const std::size_t elem = size_of(call.type), n = call.count, ranks = static_cast<std::size_t>(p);
  const bool blockwise_in = call.collective == Collective::reduce_scatter;
  const bool blockwise_out = call.collective == Collective::allgather;
  const std::size_t in_elems = blockwise_in ? n * ranks : n, out_elems = blockwise_out ? n * ranks : n;
  // One allocation holds both, with room for the overlapping case.
  std::vector<std::byte> storage((in_elems + out_elems + 2) * elem + 64);
  std::byte* in = storage.data();
  std::byte* out = storage.data() + (in_elems + 1) * elem;
  if (call.buffers == Buffers::overlapping) out = in + elem;  // partial overlap
  with_type(call.type, [&](auto zero) {
    using T = decltype(zero);
    auto* typed = reinterpret_cast<T*>(in);
    for (std::size_t i = 0; i < in_elems; ++i) typed[i] = testing::input_value<T>(rank, i, call.op);
  });
  // Allgather in place: this rank's block already sits at its place in the output.
  if (call.collective == Collective::allgather && call.buffers == Buffers::in_place)
    std::memcpy(out + static_cast<std::size_t>(rank) * n * elem, in, n * elem);
  CollectiveOptions options;
  options.algorithm = call.algorithm;
  options.segment_bytes = call.segment_bytes;
  options.fanout = call.fanout;
  const void* input = call.buffers == Buffers::null_input ? nullptr : in;
  void* output = call.buffers == Buffers::null_output ? nullptr : out;
  const bool in_place = call.buffers == Buffers::in_place;
  Outcome outcome;
  try {
    Future f;
    switch (call.collective) {
      case Collective::allreduce:
        f = comm.allreduce(input, in_place ? const_cast<void*>(input) : output, n, call.type, call.op, options);
        break;
      case Collective::reduce:
        f = comm.reduce(input, in_place ? const_cast<void*>(input) : output, n, call.type, call.op, call.root, options);
        break;
      case Collective::bcast: f = comm.bcast(in_place || !output ? const_cast<void*>(input) : in, n, call.type, call.root, options); break;
      case Collective::allgather:
        f = in_place ? comm.allgather_in_place(output, n, call.type, options)
                     : comm.allgather(input, output, n, call.type, options);
        break;
      case Collective::reduce_scatter:
        f = in_place ? comm.reduce_scatter_in_place(const_cast<void*>(input), n, call.type, call.op, options)
                     : comm.reduce_scatter(input, output, n, call.type, call.op, options);
        break;
    }
    if (!f.wait_for(kTimeout + std::chrono::seconds(2))) return {Outcome::hang, "no completion within the timeout + 2 s"};
  } catch (const Error& e) {
    return {Outcome::error, e.what()};
  } catch (const std::exception& e) {
    return {Outcome::other_exception, e.what()};
  }
  if (!check_result || !exact(call.type, call.op) || n == 0) return outcome;
  // Where the result is: allreduce/reduce/reduce_scatter in place use the input.
  const std::byte* result = in_place && call.collective != Collective::allgather ? in : out;
  if (call.collective == Collective::bcast) result = in;
  with_type(call.type, [&](auto zero) {
    using T = decltype(zero);
    const auto* got = reinterpret_cast<const T*>(result);
    auto expect = [&](std::size_t i, T want) {
      if (got[i] != want) outcome.result_right = false;
    };
    switch (call.collective) {
      case Collective::allreduce:
        for (std::size_t i = 0; i < n; ++i) expect(i, testing::expected_value<T>(p, i, call.op));
        break;
      case Collective::reduce:
        if (rank != call.root) return;
        for (std::size_t i = 0; i < n; ++i) expect(i, testing::expected_value<T>(p, i, call.op));
        break;
      case Collective::bcast:
        for (std::size_t i = 0; i < n; ++i) expect(i, testing::input_value<T>(call.root, i, call.op));
        break;
      case Collective::allgather:
        for (std::size_t j = 0; j < ranks; ++j)
          for (std::size_t i = 0; i < n; ++i) expect(j * n + i, testing::input_value<T>(static_cast<int>(j), i, call.op));
        break;
      case Collective::reduce_scatter:
        for (std::size_t i = 0; i < n; ++i)
          expect(i, testing::expected_value<T>(p, static_cast<std::size_t>(rank) * n + i, call.op));
        break;
    }
    outcome.result_checked = true;
  });
  return outcome;
}

std::string describe(const Call& c, int ranks) {
  static const char* kBuffers[] = {"separate", "in place", "null input", "null output", "overlapping"};
  return std::string(coll::to_string(c.collective)) + " P=" + std::to_string(ranks) + " count=" + std::to_string(c.count) +
         " type=" + to_string(c.type) + " op=" + to_string(c.op) + " root=" + std::to_string(c.root) + " algorithm='" +
         c.algorithm + "' segment=" + std::to_string(c.segment_bytes) + " fanout=" + std::to_string(c.fanout) +
         " buffers=" + kBuffers[static_cast<int>(c.buffers)];
}

// What the rank calls ended in, over all cases.
struct Tally {
  std::uint64_t checked = 0, unchecked = 0, errors = 0, mismatched_cases = 0, stale_cases = 0;
  std::vector<std::uint64_t> slow_seeds;
} tally;

bool verbose = false;

// Rank `rank`'s part of a case: the call on the world's communicator, or on a
// moved-from copy of it, where `rank()` must throw a clear error too.
Outcome run_rank(Communicator& comm, const Call& call, bool check_result, bool stale) {
  const int p = comm.size(), rank = comm.rank();
  if (!stale) return run_call(comm, p, rank, call, check_result);
  Communicator moved_from = comm;
  const Communicator taker = std::move(moved_from);
  try {
    (void)moved_from.rank();
    return {Outcome::other_exception, "rank() of a moved-from communicator did not throw"};
  } catch (const Error&) {
  }
  return run_call(moved_from, p, rank, call, false);
}

// One case: a world of 1..5 ranks, the same call on every rank but, one case
// in eight, one rank's perturbed and, one in sixteen, one rank calling on a
// moved-from communicator. Returns what went wrong ("" if nothing).
std::string run_case(std::uint64_t seed) {
  std::mt19937_64 g(seed);
  const int p = std::uniform_int_distribution<int>(1, 5)(g);
  const Call call = draw(g, p);
  const bool mismatch = p > 1 && std::uniform_int_distribution<int>(0, 7)(g) == 0;
  const int odd_rank = std::uniform_int_distribution<int>(0, p - 1)(g);
  Call odd = call;
  if (mismatch) perturb(odd, g);
  const bool stale = std::uniform_int_distribution<int>(0, 15)(g) == 0;
  const int stale_rank = std::uniform_int_distribution<int>(0, p - 1)(g);
  // bcast in place and a separate output are the same thing; in-place
  // allgather and reduce_scatter read and write one buffer.
  SimOptions options;
  options.timeout = kTimeout;
  std::vector<Outcome> outcomes(static_cast<std::size_t>(p));
  const auto started = std::chrono::steady_clock::now();
  {
    SimWorld world(p, options);
    auto done = std::async(std::launch::async, [&] {
      world.run([&](int rank, Communicator& comm) {
        outcomes[static_cast<std::size_t>(rank)] =
            run_rank(comm, mismatch && rank == odd_rank ? odd : call, !mismatch && !stale, stale && rank == stale_rank);
      });
    });
    if (done.wait_for(kCaseLimit) != std::future_status::ready) {
      std::fprintf(stderr, "fuzz_api: seed %llu: a rank's thread did not return within %lld s\n",
                   static_cast<unsigned long long>(seed), static_cast<long long>(kCaseLimit.count()));
      std::_Exit(3);
    }
    done.get();
  }
  if (std::chrono::steady_clock::now() - started > kSlowCase) tally.slow_seeds.push_back(seed);
  std::string problems;
  tally.mismatched_cases += mismatch;
  tally.stale_cases += stale;
  for (int r = 0; r < p; ++r) {
    const Outcome& o = outcomes[static_cast<std::size_t>(r)];
    (o.kind == Outcome::ok ? (o.result_checked ? tally.checked : tally.unchecked) : tally.errors)++;
    const std::string who = "rank " + std::to_string(r) + ": ";
    if (o.kind == Outcome::hang) problems += who + o.text + "; ";
    if (o.kind == Outcome::other_exception) problems += who + "not an earlybird::Error: " + o.text + "; ";
    if (o.kind == Outcome::error && o.text.find("earlybird") == std::string::npos) problems += who + "unclear error: " + o.text + "; ";
    if (o.kind == Outcome::ok && o.result_checked && !o.result_right) problems += who + "WRONG RESULT; ";
    if (o.kind == Outcome::ok && stale && r == stale_rank) problems += who + "a moved-from communicator did not fail; ";
  }
  if (verbose) {
    std::printf("seed %llu: %s%s\n", static_cast<unsigned long long>(seed), describe(call, p).c_str(),
                mismatch ? (", rank " + std::to_string(odd_rank) + " differs").c_str() : "");
    for (int r = 0; r < p; ++r)
      std::printf("  rank %d: %s\n", r, outcomes[static_cast<std::size_t>(r)].text.empty() ? "ok" : outcomes[static_cast<std::size_t>(r)].text.c_str());
  }
  if (!problems.empty())
    problems += "[" + describe(call, p) + (mismatch ? ", rank " + std::to_string(odd_rank) + " differs" : "") +
                (stale ? ", rank " + std::to_string(stale_rank) + " on a moved-from communicator" : "") + "]";
  return problems;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t first = 1, cases = 300;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--verbose") == 0) {
      verbose = true;
    } else if (i + 1 < argc && std::strcmp(argv[i], "--cases") == 0) {
      cases = std::stoull(argv[++i]);
    } else if (i + 1 < argc && std::strcmp(argv[i], "--seed") == 0) {
      first = std::stoull(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: fuzz_api [--cases N] [--seed S] [--verbose]\n");
      return 2;
    }
  }
  std::uint64_t failed = 0;
  for (std::uint64_t seed = first; seed < first + cases; ++seed) {
    const std::string problems = run_case(seed);
    if (problems.empty()) continue;
    ++failed;
    std::printf("FAIL seed %llu: %s\n", static_cast<unsigned long long>(seed), problems.c_str());
  }
  std::printf("fuzz_api: %llu cases from seed %llu (%llu with a mismatched rank, %llu with a moved-from "
              "communicator), %llu failed; rank calls: %llu "
              "right against the oracle, %llu completed unchecked, %llu clear errors\n",
              static_cast<unsigned long long>(cases), static_cast<unsigned long long>(first),
              static_cast<unsigned long long>(tally.mismatched_cases), static_cast<unsigned long long>(tally.stale_cases),
              static_cast<unsigned long long>(failed),
              static_cast<unsigned long long>(tally.checked), static_cast<unsigned long long>(tally.unchecked),
              static_cast<unsigned long long>(tally.errors));
  if (!tally.slow_seeds.empty()) {
    std::printf("fuzz_api: %zu cases took over %lld s (seeds", tally.slow_seeds.size(),
                static_cast<long long>(kSlowCase.count()));
    for (std::size_t k = 0; k < tally.slow_seeds.size() && k < 20; ++k)
      std::printf(" %llu", static_cast<unsigned long long>(tally.slow_seeds[k]));
    std::printf("%s)\n", tally.slow_seeds.size() > 20 ? " ..." : "");
  }
  return failed == 0 ? 0 : 1;
}
