// Checks verify() for every collective: element identity (data at a wrong offset), ordered mode, and the rules of reduce and bcast.
#include "unit_support.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/builder.hpp>
#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/verify.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace earlybird::coll;
using namespace earlybird::coll::test;

namespace {

constexpr std::uint64_t kSeeds = 8;

void check_reported(const Schedule& s, Collective collective, const std::string& problem,
                    VerifyOptions options = {}) {
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    options.seed = seed;
    const VerifyReport report = verify(s, collective, options);
    CAPTURE(seed);
    REQUIRE_FALSE(report.ok);
    CHECK_MESSAGE(contains(report.error, problem), report.error);
    CHECK_MESSAGE(contains(report.error, s.algorithm() + " P=" + std::to_string(s.ranks())), report.error);
  }
}

void check_passes(const Schedule& s, Collective collective, VerifyOptions options = {}) {
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    options.seed = seed;
    const VerifyReport report = verify(s, collective, options);
    CAPTURE(seed);
    CHECK_MESSAGE(report.ok, report.error);
    CHECK(report.steps_run == s.steps().size());
  }
}

Builder builder_for(Collective collective, const std::string& name, int ranks, std::size_t count) {
  return Builder(name, ranks, count, shape_of(collective, ranks, count));
}

VerifyOptions ordered() {
  VerifyOptions options;
  options.ordered = true;
  return options;
}

// Allreduce as a chain in rank order: rank P-1 sends its input down, each rank
// j puts input(j) op (what came from above) into scratch slot 0, rank 0 into
// its output; then the result travels back up through scratch slot 1.
// `reversed` swaps the operands of every reduce (above op input(j)).
Schedule ordered_chain_allreduce(int p, std::size_t n, bool reversed = false) {
  Builder b(reversed ? "reversed_chain" : "ordered_chain", p, n);
  auto partial = [&](int r) { return r == p - 1 ? in(r, 0, n) : scratch(r, 0, n); };
  for (int r = p - 1; r > 0; --r) {
    b.put(partial(r), scratch(r - 1, 0, n));
    const Slot dst = r - 1 == 0 ? out(0, 0, n) : scratch(r - 1, 0, n);
    if (reversed)
      b.reduce(dst, scratch(r - 1, 0, n), in(r - 1, 0, n));
    else
      b.reduce(dst, in(r - 1, 0, n), scratch(r - 1, 0, n));
  }
  for (int r = 1; r < p; ++r) {
    b.put(out(r - 1, 0, n), scratch(r, n, n));
    b.copy(out(r, 0, n), scratch(r, n, n));
  }
  b.copy_unwritten_output();
  return std::move(b).finish();
}

// Reduce to rank 0, P = 3, count 2: ranks 1 and 2 send their inputs, rank 0
// combines them in rank order.
Schedule small_reduce(bool writes_non_root_output) {
  Builder b = builder_for(Collective::reduce, "small_reduce", 3, 2);
  b.put(in(2, 0, 2), scratch(1, 0, 2));
  if (writes_non_root_output) {
    b.reduce(out(1, 0, 2), in(1, 0, 2), scratch(1, 0, 2));
    b.put(out(1, 0, 2), scratch(0, 0, 2));
  } else {
    b.reduce(scratch(1, 0, 2), in(1, 0, 2), scratch(1, 0, 2));
    b.put(scratch(1, 0, 2), scratch(0, 0, 2));
  }
  b.reduce(out(0, 0, 2), in(0, 0, 2), scratch(0, 0, 2));
  return std::move(b).finish();
}

// Broadcast from rank 0 to P = 3 ranks, count 2, along a chain.
Schedule small_bcast(int reads_input_of = 0) {
  Builder b = builder_for(Collective::bcast, "small_bcast", 3, 2);
  b.put(in(0, 0, 2), scratch(1, 0, 2));  // before the copy: input may alias output
  b.copy(out(0, 0, 2), in(0, 0, 2));
  b.copy(out(1, 0, 2), scratch(1, 0, 2));
  b.put(out(1, 0, 2), scratch(2, 0, 2));
  b.copy(out(2, 0, 2), scratch(2, 0, 2));
  if (reads_input_of > 0) b.copy(scratch(reads_input_of, 4, 2), in(reads_input_of, 0, 2));
  return std::move(b).finish();
}

// Allgather over P ranks, block n: every rank copies its input into its own
// block and puts that block into every peer's scratch slot of its rank; the
// peer copies slot j into block j + block_offset(j) * n. (No input is read
// after a block is placed: in place, rank r's input is its block r, which a
// wrong offset overwrites.)
template <class BlockOffset>
Schedule direct_allgather(int p, std::size_t n, BlockOffset block_offset) {
  Builder b = builder_for(Collective::allgather, "direct_allgather", p, n);
  const auto block = [n](int r) { return static_cast<std::size_t>(r) * n; };
  for (int r = 0; r < p; ++r) b.copy(out(r, block(r), n), in(r, 0, n));
  for (int r = 0; r < p; ++r)
    for (int j = 0; j < p; ++j) {
      if (j == r) continue;
      b.put(out(j, block(j), n), scratch(r, block(j), n));
      b.copy(out(r, block(j) + static_cast<std::size_t>(block_offset(j)), n), scratch(r, block(j), n));
    }
  return std::move(b).finish();
}

// Reduce-scatter over P = 2, block n: rank r puts input block sent(r) into the
// peer's scratch and combines its own input block reduced(r) with what arrived.
// Correct: sent(r) = 1 - r, reduced(r) = r.
template <class Sent, class Reduced>
Schedule pair_reduce_scatter(std::size_t n, Sent sent, Reduced reduced) {
  Builder b = builder_for(Collective::reduce_scatter, "pair_reduce_scatter", 2, n);
  for (int r = 0; r < 2; ++r) b.put(in(r, sent(r) * n, n), scratch(1 - r, 0, n));
  for (int r = 0; r < 2; ++r) b.reduce(out(r, 0, n), in(r, reduced(r) * n, n), scratch(r, 0, n));
  return std::move(b).finish();
}

std::size_t peer_block(int r) { return static_cast<std::size_t>(1 - r); }
std::size_t own_block(int r) { return static_cast<std::size_t>(r); }
std::size_t block_0(int) { return 0; }
std::size_t block_1(int) { return 1; }

}  // namespace

TEST_CASE("verify(allreduce) is verify_allreduce") {
  const Schedule ring = allreduce_ring(5, 17);
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const VerifyReport a = verify(ring, Collective::allreduce, {seed});
    const VerifyReport b = verify_allreduce(ring, {seed});
    CHECK(a.ok);
    CHECK(a.ok == b.ok);
    CHECK(a.steps_run == b.steps_run);
  }
}

TEST_CASE("a schedule whose buffers do not fit the collective is rejected") {
  Builder b("wrong_shape", 2, 3);  // allgather of 3 needs an output of 6
  b.copy_input_to_output();
  check_reported(std::move(b).finish(), Collective::allgather, "a allgather of this count has 3 and 6");
}

TEST_CASE("element identity: reducing two different input elements is misaligned") {
  Builder b("shifted_reduce", 2, 2);
  b.copy_input_to_output();
  b.put(out(0, 0, 2), scratch(1, 0, 2));
  b.reduce(out(1, 0, 1), scratch(1, 1, 1));  // element 0 of rank 1 with element 1 of rank 0
  b.reduce(out(1, 1, 1), scratch(1, 0, 1));
  // Either reduce may run first; both are misaligned.
  check_reported(std::move(b).finish(), Collective::allreduce, "misaligned: combines input element");
}

TEST_CASE("element identity: an allreduce result at a shifted offset is rejected") {
  // Rank 1 gets the correct sum, shifted by one element (put to the wrong place).
  Builder b("shifted_result", 2, 3);
  b.copy_input_to_output();
  b.put(out(0, 0, 3), scratch(1, 0, 3));
  b.reduce(out(1, 0, 3), scratch(1, 0, 3));
  b.put(out(1, 0, 2), scratch(0, 1, 2));
  b.put(out(1, 2, 1), scratch(0, 0, 1));
  b.copy(out(0, 0, 3), scratch(0, 0, 3));
  check_reported(std::move(b).finish(), Collective::allreduce,
                 "rank 0 output element 0 holds input element 2 of its contributors where element 0 belongs");
}

TEST_CASE("element identity: one rank copying its input to the wrong place") {
  Builder b("swapped_copy", 1, 2);
  b.copy(scratch(0, 0, 2), in(0, 0, 2));
  b.copy(out(0, 0, 1), scratch(0, 1, 1));
  b.copy(out(0, 1, 1), scratch(0, 0, 1));
  check_reported(std::move(b).finish(), Collective::allreduce, "holds input element 1 of its contributors where element 0");
}

TEST_CASE("allgather: rank j's element i must land at j*n + i of every rank") {
  for (int p : {1, 2, 3, 5}) {
    for (std::size_t n : {1u, 2u, 7u}) {
      CAPTURE(p);
      CAPTURE(n);
      check_passes(direct_allgather(p, n, [](int) { return 0; }), Collective::allgather);
    }
  }
  SUBCASE("an element copied one place late") {
    Builder b = builder_for(Collective::allgather, "late_element", 2, 2);
    for (int r = 0; r < 2; ++r) {
      b.put(in(r, 0, 2), scratch(1 - r, 0, 2));
      b.copy(out(r, static_cast<std::size_t>(r) * 2, 2), in(r, 0, 2));
    }
    b.copy(out(0, 2, 2), scratch(0, 0, 2));
    b.copy(out(1, 0, 2), scratch(1, 0, 2));
    b.copy(out(1, 1, 1), scratch(1, 0, 1));
    check_reported(std::move(b).finish(), Collective::allgather,
                   "rank 1 output element 1 holds input element 0 of its contributors where element 1 belongs");
  }
  SUBCASE("a block in another rank's place") {
    const Schedule s = direct_allgather(3, 2, [](int j) { return j == 2 ? -2 : 0; });
    check_reported(s, Collective::allgather, "holds {2} where exactly {1} belongs");
  }
  SUBCASE("elements swapped inside a block") {
    Builder b = builder_for(Collective::allgather, "swapped_allgather", 2, 2);
    for (int r = 0; r < 2; ++r) {
      b.put(in(r, 0, 2), scratch(1 - r, 0, 2));
      b.copy(out(r, static_cast<std::size_t>(r) * 2, 2), in(r, 0, 2));
    }
    b.copy(out(0, 2, 2), scratch(0, 0, 2));
    b.copy(out(1, 0, 1), scratch(1, 1, 1));
    b.copy(out(1, 1, 1), scratch(1, 0, 1));
    check_reported(std::move(b).finish(), Collective::allgather,
                   "rank 1 output element 0 holds input element 1 of its contributors where element 0 belongs");
  }
}

TEST_CASE("reduce_scatter: rank r's element i combines every rank's element r*n + i") {
  check_passes(pair_reduce_scatter(3, peer_block, own_block), Collective::reduce_scatter);
  check_passes(pair_reduce_scatter(1, peer_block, own_block), Collective::reduce_scatter);
  SUBCASE("combining blocks of different offsets is misaligned") {
    check_reported(pair_reduce_scatter(3, peer_block, block_1), Collective::reduce_scatter,
                   "misaligned: combines input element 3 of {0} with input element 0 of {1}");
  }
  SUBCASE("every rank reduces block 0: rank 1 holds the wrong elements") {
    check_reported(pair_reduce_scatter(3, block_0, block_0), Collective::reduce_scatter,
                   "rank 1 output element 0 holds input element 0 of its contributors where element 3 belongs");
  }
}

TEST_CASE("ordered mode: a chain in rank order passes, the ring and reversed operands do not") {
  for (int p = 1; p <= 8; ++p) {
    CAPTURE(p);
    check_passes(ordered_chain_allreduce(p, 5), Collective::allreduce, ordered());
    check_passes(ordered_chain_allreduce(p, 5, true), Collective::allreduce);  // fine when commutative
    if (p >= 2) check_reported(ordered_chain_allreduce(p, 5, true), Collective::allreduce, "out of rank order", ordered());
  }
  for (int p = 3; p <= 9; ++p) {
    CAPTURE(p);
    check_passes(allreduce_ring(p, 2 * static_cast<std::size_t>(p)), Collective::allreduce);
    check_reported(allreduce_ring(p, 2 * static_cast<std::size_t>(p)), Collective::allreduce,
                   "ordered mode needs left = [a,b] and right = [b+1,c]", ordered());
  }
}

TEST_CASE("ordered mode: operands that are not rank intervals are reported") {
  // Rank 0 combines {0} with {2} first: adjacent in the reduce, not in rank order.
  Builder b("gap", 3, 1);
  b.copy_input_to_output();
  b.put(out(2, 0, 1), scratch(0, 0, 1));
  b.reduce(out(0, 0, 1), scratch(0, 0, 1));
  b.put(out(1, 0, 1), scratch(0, 1, 1));
  b.reduce(out(0, 0, 1), scratch(0, 1, 1));
  b.put(out(0, 0, 1), scratch(1, 1, 1));
  b.put(out(0, 0, 1), scratch(2, 1, 1));
  b.copy(out(1, 0, 1), scratch(1, 1, 1));
  b.copy(out(2, 0, 1), scratch(2, 1, 1));
  const Schedule s = std::move(b).finish();
  check_passes(s, Collective::allreduce);
  check_reported(s, Collective::allreduce, "combines {0} (left) with {2} (right)", ordered());
}

TEST_CASE("reduce: only the root's output is checked, and no other output may be written") {
  check_passes(small_reduce(false), Collective::reduce);
  check_passes(small_reduce(false), Collective::reduce, ordered());
  check_reported(small_reduce(true), Collective::reduce, "writes the output of rank 1");
  // The same schedule is no allreduce: ranks 1 and 2 lack the result.
  check_reported(small_reduce(false), Collective::allreduce, "rank 1 output element 0..2 is undefined");
}

TEST_CASE("reduce: a root missing a contribution is reported") {
  Builder b = builder_for(Collective::reduce, "root_skips_rank_2", 3, 1);
  b.put(in(1, 0, 1), scratch(0, 0, 1));
  b.reduce(out(0, 0, 1), in(0, 0, 1), scratch(0, 0, 1));
  check_reported(std::move(b).finish(), Collective::reduce, "misses the contribution of rank 2");
}

TEST_CASE("bcast: every output holds exactly the root's input; no other input is read") {
  check_passes(small_bcast(), Collective::bcast);
  check_reported(small_bcast(2), Collective::bcast, "reads the input of rank 2");
  SUBCASE("an output holding a reduction is not a broadcast") {
    Builder b = builder_for(Collective::bcast, "reducing_bcast", 2, 1);
    b.copy(out(0, 0, 1), in(0, 0, 1));
    b.put(out(0, 0, 1), scratch(1, 0, 1));
    b.copy(out(1, 0, 1), scratch(1, 0, 1));
    b.put(out(1, 0, 1), scratch(0, 0, 1));
    b.reduce(out(0, 0, 1), scratch(0, 0, 1));
    check_reported(std::move(b).finish(), Collective::bcast, "double counting");
  }
  SUBCASE("an output never written") {
    Builder b = builder_for(Collective::bcast, "forgets_rank_1", 2, 2);
    b.copy(out(0, 0, 2), in(0, 0, 2));
    check_reported(std::move(b).finish(), Collective::bcast, "rank 1 output element 0..2 is undefined");
  }
  SUBCASE("the root's vector reversed on the way") {
    Builder b = builder_for(Collective::bcast, "reversing_bcast", 2, 2);
    b.put(in(0, 0, 1), scratch(1, 1, 1));
    b.put(in(0, 1, 1), scratch(1, 0, 1));
    b.copy(out(0, 0, 2), in(0, 0, 2));
    b.copy(out(1, 0, 2), scratch(1, 0, 2));
    check_reported(std::move(b).finish(), Collective::bcast, "holds input element 1 of its contributors where element 0");
  }
}
