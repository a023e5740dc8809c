// Checks the per-rank puts, elements sent and reduced, rounds and scratch of each allreduce against docs/algorithms.md.
#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/partition.hpp>
#include <earlybird/collectives/schedule.hpp>

#include <doctest/doctest.h>

#include <bit>
#include <cstddef>

using namespace earlybird::coll;

namespace {

struct Expected {
  std::size_t puts, elems_sent, elems_reduced;
};

void check_rank(const ScheduleStats& stats, int rank, const Expected& e) {
  CAPTURE(rank);
  const RankStats& got = stats.per_rank[static_cast<std::size_t>(rank)];
  CHECK(got.puts == e.puts);
  CHECK(got.elems_sent == e.elems_sent);
  CHECK(got.elems_reduced == e.elems_reduced);
}

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

std::size_t chunk_of(std::size_t count, int p, int index) { return chunk(count, p, index % p).count; }

std::size_t log2_exact(int p) { return static_cast<std::size_t>(ceil_log2(p)); }

}  // namespace

TEST_CASE("ring, count divisible by P: 2(P-1) puts, 2(P-1)/P*count sent, (P-1)/P*count reduced, 2(P-1) rounds") {
  for (int p = 1; p <= 24; ++p) {
    for (std::size_t per_rank : {1u, 3u, 16u}) {
      const auto n = static_cast<std::size_t>(p);
      const std::size_t count = per_rank * n;
      CAPTURE(p);
      CAPTURE(count);
      const Schedule s = allreduce_ring(p, count);
      const ScheduleStats stats = schedule_stats(s);
      for (int r = 0; r < p; ++r) {
        check_rank(stats, r, {2 * (n - 1), 2 * (n - 1) * count / n, (n - 1) * count / n});
        CHECK(s.scratch_elems(r) == 2 * (n - 1) * per_rank);
      }
      CHECK(stats.rounds == 2 * (n - 1));
    }
  }
}

TEST_CASE("ring, any count: rank r sends all chunks but c(r+1) and c(r+2), reduces all but c(r)") {
  for (int p = 1; p <= 20; ++p) {
    const auto n = static_cast<std::size_t>(p);
    for (std::size_t count : {n + 1, 7 * n + 5, std::size_t{1000}}) {
      CAPTURE(p);
      CAPTURE(count);
      const ScheduleStats stats = schedule_stats(allreduce_ring(p, count));
      for (int r = 0; r < p; ++r) {
        const std::size_t next = chunk_of(count, p, r + 1), after = chunk_of(count, p, r + 2);
        check_rank(stats, r, {2 * (n - 1), 2 * count - next - after, count - chunk_of(count, p, r)});
      }
      CHECK(stats.rounds == 2 * (n - 1));
    }
  }
}

TEST_CASE("ring with count < P drops the steps of empty chunks") {
  const ScheduleStats stats = schedule_stats(allreduce_ring(8, 3));
  std::size_t puts = 0;
  for (const RankStats& r : stats.per_rank) puts += r.puts;
  CHECK(puts == 2 * 3 * 7);  // each non-empty chunk travels P-1 hops twice
  CHECK(schedule_stats(allreduce_ring(8, 0)).rounds == 0);
}

TEST_CASE("segmented ring: 2(P-1)*ceil((count/P)/segment) puts, the ring's elements and rounds") {
  for (int p = 1; p <= 16; ++p) {
    for (std::size_t per_rank : {1u, 12u, 13u}) {
      for (std::size_t segment : {1u, 4u, 5u, 100u}) {
        const auto n = static_cast<std::size_t>(p);
        const std::size_t count = per_rank * n;
        CAPTURE(p);
        CAPTURE(count);
        CAPTURE(segment);
        const ScheduleStats stats = schedule_stats(allreduce_segmented_ring(p, count, segment));
        for (int r = 0; r < p; ++r)
          check_rank(stats, r,
                     {2 * (n - 1) * ceil_div(per_rank, segment), 2 * (n - 1) * per_rank, (n - 1) * per_rank});
        CHECK(stats.rounds == 2 * (n - 1));
      }
    }
  }
}

TEST_CASE("segmented ring with one segment per chunk is the ring") {
  const ScheduleStats ring = schedule_stats(allreduce_ring(6, 60));
  const ScheduleStats seg = schedule_stats(allreduce_segmented_ring(6, 60, 10));
  CHECK(ring.rounds == seg.rounds);
  for (int r = 0; r < 6; ++r) {
    CHECK(ring.per_rank[r].puts == seg.per_rank[r].puts);
    CHECK(ring.per_rank[r].elems_sent == seg.per_rank[r].elems_sent);
  }
}

TEST_CASE("recursive doubling, P a power of two: log2 P puts of count elements, log2 P rounds") {
  for (int p : {1, 2, 4, 8, 16, 32, 64, 128}) {
    for (std::size_t count : {1u, 7u, 1000u}) {
      CAPTURE(p);
      CAPTURE(count);
      const Schedule s = allreduce_recursive_doubling(p, count);
      const ScheduleStats stats = schedule_stats(s);
      const std::size_t l = log2_exact(p);
      for (int r = 0; r < p; ++r) check_rank(stats, r, {l, count * l, count * l});
      CHECK(stats.rounds == l);
      CHECK(s.max_scratch_elems() == (p == 1 ? 0 : l * count));
    }
  }
}

TEST_CASE("recursive doubling, other P: fold, log2 P' butterfly rounds, unfold: log2 P' + 2 rounds") {
  for (int p : {3, 5, 6, 7, 12, 100, 127}) {
    for (std::size_t count : {1u, 10u}) {
      CAPTURE(p);
      CAPTURE(count);
      const Schedule s = allreduce_recursive_doubling(p, count);
      const ScheduleStats stats = schedule_stats(s);
      const int core = floor_pow2(p), extra = p - core;
      const std::size_t l = log2_exact(core);
      for (int r = 0; r < p; ++r) {
        if (r < extra)  // receives a fold, sends the unfold
          check_rank(stats, r, {l + 1, (l + 1) * count, (l + 1) * count});
        else if (r < core)
          check_rank(stats, r, {l, l * count, l * count});
        else  // folds into rank r - core, then waits for the result
          check_rank(stats, r, {1, count, 0});
      }
      CHECK(stats.rounds == l + 2);
      CHECK(s.max_scratch_elems() == (l + 1) * count);
    }
  }
}

namespace {

// The pair fold (recursive_doubling_halves, rabenseifner): the core rank that
// real rank r plays, or -1 for a rank 2i (i < P - P') that folds out.
int core_rank_of(int r, int p) {
  const int extra = p - floor_pow2(p);
  if (r >= 2 * extra) return r - extra;
  return r % 2 == 1 ? r / 2 : -1;
}

std::size_t popcount(int v) { return static_cast<std::size_t>(std::popcount(static_cast<unsigned>(v))); }

}  // namespace

TEST_CASE("linear: rank 0 P-1 puts, sends and reduces (P-1)*count; others 1 put of count; 2 rounds") {
  for (int p = 1; p <= 24; ++p) {
    for (std::size_t count : {1u, 7u, 1000u}) {
      const auto others = static_cast<std::size_t>(p - 1);
      CAPTURE(p);
      CAPTURE(count);
      const Schedule s = allreduce_linear(p, count);
      const ScheduleStats stats = schedule_stats(s);
      check_rank(stats, 0, {others, others * count, others * count});
      for (int r = 1; r < p; ++r) {
        check_rank(stats, r, {1, count, 0});
        CHECK(s.scratch_elems(r) == count);
      }
      CHECK(s.scratch_elems(0) == others * count);
      CHECK(stats.rounds == (p == 1 ? 0 : 2));
    }
  }
}

TEST_CASE("chain: q = ceil(count/s) segments; ends q puts, inner ranks 2q; 2(P-1) rounds whatever q") {
  for (int p = 1; p <= 16; ++p) {
    for (std::size_t count : {1u, 12u, 13u, 100u}) {
      for (std::size_t segment : {1u, 4u, 5u, 100u}) {
        CAPTURE(p);
        CAPTURE(count);
        CAPTURE(segment);
        const std::size_t q = ceil_div(count, segment);
        const Schedule s = allreduce_chain(p, count, segment);
        const ScheduleStats stats = schedule_stats(s);
        if (p == 1) {
          check_rank(stats, 0, {0, 0, 0});
          continue;
        }
        check_rank(stats, 0, {q, count, 0});
        for (int r = 1; r < p - 1; ++r) check_rank(stats, r, {2 * q, 2 * count, count});
        check_rank(stats, p - 1, {q, count, count});
        CHECK(stats.rounds == 2 * static_cast<std::size_t>(p - 1));
        CHECK(s.max_scratch_elems() == 2 * count);
      }
    }
  }
}

TEST_CASE("recursive doubling halves: 2 log2 P' puts and log2 P' * count sent per core rank, one half reduced a round") {
  for (int p = 1; p <= 40; ++p) {
    for (std::size_t count : {2u, 10u, 11u}) {  // count 1: the upper half is empty, its puts dropped
      CAPTURE(p);
      CAPTURE(count);
      const Schedule s = allreduce_recursive_doubling_halves(p, count);
      const ScheduleStats stats = schedule_stats(s);
      const int core = floor_pow2(p);
      const std::size_t l = log2_exact(core), lower_half = ceil_div(count, 2), upper_half = count / 2;
      const bool folds = core != p;
      for (int r = 0; r < p; ++r) {
        const int c = core_rank_of(r, p);
        if (c < 0) {
          check_rank(stats, r, {1, count, 0});
          continue;
        }
        // In round k rank c reduces the upper half when bit k of c is set.
        const std::size_t halves = popcount(c) * upper_half + (l - popcount(c)) * lower_half;
        const std::size_t fold = c < p - core ? 1 : 0;  // took a fold: one more put and vector
        check_rank(stats, r, {2 * l + fold, (l + fold) * count, halves + fold * count});
      }
      CHECK(stats.rounds == 2 * l + (folds ? 2 : 0));
      CHECK(s.max_scratch_elems() == (l + (folds ? 1 : 0)) * count);
    }
  }
}

TEST_CASE("rabenseifner, P' divides count: 2 log2 P' puts, 2(P'-1)/P' count sent, (P'-1)/P' count reduced") {
  for (int p = 1; p <= 40; ++p) {
    for (std::size_t per_chunk : {1u, 3u}) {
      const int core = floor_pow2(p);
      const auto n = static_cast<std::size_t>(core);
      const std::size_t count = per_chunk * n, l = log2_exact(core);
      const bool folds = core != p;
      CAPTURE(p);
      CAPTURE(count);
      const Schedule s = allreduce_rabenseifner(p, count);
      const ScheduleStats stats = schedule_stats(s);
      for (int r = 0; r < p; ++r) {
        const int c = core_rank_of(r, p);
        if (c < 0) {
          check_rank(stats, r, {1, count, 0});
          continue;
        }
        const std::size_t fold = c < p - core ? 1 : 0;
        const std::size_t given_away = (n - 1) * per_chunk;  // count (P'-1)/P'
        check_rank(stats, r, {2 * l + fold, 2 * given_away + fold * count, given_away + fold * count});
        // Allgather area, a fold's vector, the halving rounds packed.
        CHECK(s.scratch_elems(r) == (p == 1 ? 0 : count + fold * count + given_away));
      }
      CHECK(stats.rounds == 2 * l + (folds ? 2 : 0));
    }
  }
}

TEST_CASE("rabenseifner, linear and chain, any count: every element is reduced exactly P-1 times in all") {
  for (int p = 1; p <= 40; ++p) {
    for (std::size_t count : {std::size_t{1}, static_cast<std::size_t>(p) + 1, std::size_t{1001}}) {
      CAPTURE(p);
      CAPTURE(count);
      for (const Schedule& s : {allreduce_rabenseifner(p, count), allreduce_linear(p, count),
                                allreduce_chain(p, count, 7)}) {
        CAPTURE(s.algorithm());
        std::size_t reduced = 0;
        for (const RankStats& r : schedule_stats(s).per_rank) reduced += r.elems_reduced;
        CHECK(reduced == static_cast<std::size_t>(p - 1) * count);
      }
    }
  }
}

namespace {

// The catalogue's reduce + bcast pairs and the reduce and bcast algorithms
// they chain.
struct Composition {
  const char* allreduce;
  const char* reduce;
  const char* bcast;
};
constexpr Composition kCompositions[] = {
    {"binomial", "binomial", "binomial"},
    {"binary_tree", "binary_tree", "binary_tree"},
    {"reduce_bcast", "binomial", "binomial"},
    {"chain_reduce_bcast", "chain", "chain"},
    {"greedy_reduce_bcast", "greedy", "binary_tree"},
};

Schedule make(Collective collective, const char* name, int p, std::size_t count, std::size_t segment) {
  const Algorithm* algorithm = find_algorithm(collective, name);
  REQUIRE(algorithm != nullptr);
  AlgorithmParams params;
  params.segment_elems = segment;
  return algorithm->make(p, count, params, 4);
}

// Children of rank r in the binomial trees: r + 2^j for 2^j below r's lowest
// set bit (any 2^j for rank 0), below P.
std::size_t binomial_children(int r, int p) {
  std::size_t children = 0;
  for (int step = 1; (r == 0 || step < (r & -r)) && r + step < p; step *= 2) ++children;
  return children;
}

}  // namespace

TEST_CASE("reduce + bcast compositions: each rank does the reduce's work plus the bcast's; rounds add up") {
  for (const Composition& c : kCompositions) {
    for (int p = 1; p <= 24; ++p) {
      for (std::size_t count : {1u, 13u, 100u}) {
        for (std::size_t segment : {3u, 64u}) {
          CAPTURE(c.allreduce);
          CAPTURE(p);
          CAPTURE(count);
          CAPTURE(segment);
          const ScheduleStats both = schedule_stats(make(Collective::allreduce, c.allreduce, p, count, segment));
          const ScheduleStats reduce = schedule_stats(make(Collective::reduce, c.reduce, p, count, segment));
          const ScheduleStats bcast = schedule_stats(make(Collective::bcast, c.bcast, p, count, segment));
          for (int r = 0; r < p; ++r) {
            const RankStats& a = reduce.per_rank[static_cast<std::size_t>(r)];
            const RankStats& b = bcast.per_rank[static_cast<std::size_t>(r)];
            check_rank(both, r, {a.puts + b.puts, a.elems_sent + b.elems_sent, a.elems_reduced + b.elems_reduced});
          }
          CHECK(both.rounds == reduce.rounds + bcast.rounds);
        }
      }
    }
  }
}

TEST_CASE("binomial: rank r sends to its parent and each of its c(r) children, reduces c(r) vectors; 2 floor(log2 P) rounds") {
  for (int p = 1; p <= 40; ++p) {
    for (std::size_t count : {1u, 7u, 1000u}) {
      CAPTURE(p);
      CAPTURE(count);
      const ScheduleStats stats = schedule_stats(allreduce_binomial(p, count));
      for (int r = 0; r < p; ++r) {
        const std::size_t children = binomial_children(r, p), puts = children + (r == 0 ? 0 : 1);
        check_rank(stats, r, {puts, puts * count, children * count});
      }
      CHECK(stats.rounds == 2 * static_cast<std::size_t>(std::bit_width(static_cast<unsigned>(p)) - 1));
    }
  }
}

TEST_CASE("count 0: no transfers at all") {
  for (const Algorithm& algorithm : allreduce_algorithms()) {
    const Schedule s = algorithm.make(7, 0, {}, 4);
    CHECK(s.steps().empty());
    CHECK(schedule_stats(s).rounds == 0);
    CHECK(s.max_scratch_elems() == 0);
    CHECK(s.max_flag_count() == 0);
  }
}

TEST_CASE("inline_flags: every rank puts its vector to the P-1 others and reduces (P-1) count; one round") {
  for (int p = 2; p <= 24; ++p) {
    for (std::size_t count : {1u, 7u, 1000u}) {
      CAPTURE(p);
      CAPTURE(count);
      const ScheduleStats stats = schedule_stats(allreduce_inline_flags(p, count));
      const std::size_t peers = static_cast<std::size_t>(p - 1);
      for (int r = 0; r < p; ++r) check_rank(stats, r, {peers, peers * count, peers * count});
      CHECK(stats.rounds == 1);
    }
  }
}
