// MPI tier: reduce (any root), bcast (any root), allgather and reduce_scatter
// — every algorithm of each catalogue — against the MPI library's own
// collective, for several types, operators, counts and roots, in place where
// the call allows it; non-commutative user operators against the rank-order
// fold; and back-to-back rooted collectives with changing roots, which only
// the lane guard keeps from overwriting data a peer still reads; and user
// operators of one name, which a call's shape does not tell apart.
#include "../common/concat_op.hpp"
#include "../common/oracle.hpp"
#include "collective_checks.hpp"
#include "mpi_check.hpp"
#include "mpi_types.hpp"

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/earlybird.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

using namespace earlybird;
using coll::Collective;
using earlybird::testing::make_input;
using earlybird::testing::MpiCheck;
using earlybird::testing::roots;
using earlybird::testing::Setting;
using earlybird::testing::check_allgather;
using earlybird::testing::check_bcast;
using earlybird::testing::check_reduce;
using earlybird::testing::check_reduce_scatter;

namespace {

CollectiveOptions with_algorithm(const std::string& name) {
  CollectiveOptions o;
  o.algorithm = name;
  return o;
}

void check_catalogues(Communicator& comm, MpiCheck& check) {
  const auto p = static_cast<std::size_t>(comm.size());
  const std::vector<std::size_t> counts{0, 1, p + 1, 1000, 20011};
  int variant = 0;
  for (std::size_t count : counts)
    for (int root : roots(comm.size())) {
      const bool in_place = (variant++ % 2) == 1;
      for (const auto& a : coll::algorithms(Collective::reduce)) {
        const Setting s{std::string(a.name), count, root, in_place};
        check_reduce<std::int32_t>(comm, s, Op::sum, check);
        check_reduce<double>(comm, s, Op::max, check);
        check_reduce<std::uint8_t>(comm, s, Op::bxor, check);
      }
      for (const auto& a : coll::algorithms(Collective::bcast)) {
        check_bcast<float>(comm, {std::string(a.name), count, root, false}, check);
        check_bcast<std::int16_t>(comm, {std::string(a.name), count, root, false}, check);
      }
    }
  for (std::size_t count : {std::size_t{0}, std::size_t{1}, p + 1, std::size_t{777}, std::size_t{4099}}) {
    for (const auto& a : coll::algorithms(Collective::allgather)) {
      check_allgather<std::int64_t>(comm, {std::string(a.name), count, 0, false}, check);
      check_allgather<std::uint8_t>(comm, {std::string(a.name), count, 0, true}, check);
    }
    for (const auto& a : coll::algorithms(Collective::reduce_scatter)) {
      check_reduce_scatter<std::int32_t>(comm, {std::string(a.name), count, 0, false}, Op::sum, check);
      check_reduce_scatter<float>(comm, {std::string(a.name), count, 0, true}, Op::min, check);
    }
  }
}

// Non-commutative operator: order-keeping algorithms give the rank-order
// result; the others refuse it with a clear error.
void check_non_commutative(Communicator& comm, MpiCheck& check) {
  using earlybird::testing::digits;
  using earlybird::testing::ordered_concatenation;
  const std::size_t n = 1031;
  const ReduceOp concatenation = earlybird::testing::concatenation();
  for (Collective c : {Collective::allreduce, Collective::reduce, Collective::reduce_scatter})
    for (const auto& a : coll::algorithms(c)) {
      const std::string what = std::string("concatenation ") + coll::to_string(c) + " " + std::string(a.name);
      const auto options = with_algorithm(std::string(a.name));
      const bool scatter = c == Collective::reduce_scatter;
      std::vector<std::int64_t> in = digits(comm.rank(), scatter ? n * static_cast<std::size_t>(comm.size()) : n);
      std::vector<std::int64_t> out(n);
      const std::span<std::int64_t> i(in), o(out);
      const Future f = c == Collective::allreduce ? comm.allreduce(i, o, concatenation, options)
                       : c == Collective::reduce  ? comm.reduce(i, o, concatenation, 0, options)
                                                  : comm.reduce_scatter(i, o, concatenation, options);
      if (a.needs_commutative) {
        const std::string error = check.error_of(f, what);
        check.expect(error.find("needs a commutative operator") != std::string::npos,
                     what + ": refusal says why: '" + error + "'");
        continue;
      }
      check.wait(f, what);
      if (c == Collective::reduce && comm.rank() != 0) continue;
      const std::size_t first = scatter ? n * static_cast<std::size_t>(comm.rank()) : 0;
      std::size_t wrong = 0;
      for (std::size_t k = 0; k < n; ++k) wrong += out[k] != ordered_concatenation(comm.size(), first + k) ? 1 : 0;
      check.expect(wrong == 0, what + ": " + std::to_string(wrong) + " elements differ from the rank-order result");
    }
}

// Rooted collectives back to back with changing roots, several in flight.
void check_rooted_back_to_back(Communicator& comm, MpiCheck& check) {
  constexpr int kRounds = 60;
  std::vector<std::vector<std::int32_t>> buffers, results;
  std::vector<Future> futures;
  for (int k = 0; k < kRounds; ++k) {
    const int root = (k * 7) % comm.size();
    const std::size_t count = 1 + static_cast<std::size_t>(k % 5) * 301;
    if (k % 2 == 0) {
      buffers.push_back(comm.rank() == root ? make_input<std::int32_t>(root, count, Op::sum)
                                            : std::vector<std::int32_t>(count, -1));
      results.emplace_back();
      futures.push_back(comm.bcast(std::span<std::int32_t>(buffers.back()), root));
    } else {
      buffers.push_back(make_input<std::int32_t>(comm.rank(), count, Op::sum));
      results.emplace_back(count);
      futures.push_back(comm.reduce(std::span<std::int32_t>(buffers.back()), std::span<std::int32_t>(results.back()),
                                    Op::sum, root));
    }
  }
  for (int k = 0; k < kRounds; ++k) {
    const auto i = static_cast<std::size_t>(k);
    const int root = (k * 7) % comm.size();
    check.wait(futures[i], "back-to-back rooted call " + std::to_string(k));
    if (k % 2 == 0)
      check.expect(buffers[i] == make_input<std::int32_t>(root, buffers[i].size(), Op::sum),
                   "back-to-back bcast " + std::to_string(k));
    else if (comm.rank() == root)
      check.expect(earlybird::testing::count_wrong(results[i], comm.size(), Op::sum) == 0,
                   "back-to-back reduce " + std::to_string(k));
  }
}

// Two user operators that calls cannot tell apart by shape (same name, type
// and commutativity), alternating on one small shape: a call must fold with
// its own operator, however the runtime reuses what it built for the last.
void check_user_operators_of_one_name(Communicator& comm, MpiCheck& check) {
  using V = std::int64_t;
  const auto fold = [](auto pick) {
    return ReduceOp::user<V>(
        [pick](std::span<const V> left, std::span<const V> right, std::span<V> out) {
          for (std::size_t i = 0; i < out.size(); ++i) out[i] = pick(left[i], right[i]);
        },
        /*commutative=*/true);
  };
  const ReduceOp sum = fold([](V a, V b) { return a + b; });
  const ReduceOp max = fold([](V a, V b) { return std::max(a, b); });
  const V ranks = comm.size();
  const std::vector<V> in(3, comm.rank() + 1);
  CollectiveOptions blocking;
  blocking.blocking = true;
  for (int k = 0; k < 8; ++k) {
    const bool adds = k % 2 == 0;
    std::vector<V> out(in.size(), -1);
    const std::string what = "user operator of one name, call " + std::to_string(k);
    check.wait(comm.allreduce(std::span<const V>(in), std::span<V>(out), adds ? sum : max, blocking), what);
    const V expected = adds ? ranks * (ranks + 1) / 2 : ranks;
    check.expect(std::ranges::all_of(out, [&](V v) { return v == expected; }), what + ": wrong result");
  }
}

}  // namespace

int main(int argc, char** argv) {
  int code = 1;
  {
    Runtime runtime(&argc, &argv);
    Communicator world = runtime.world();
    MpiCheck check(world.rank());
    check_catalogues(world, check);
    check_non_commutative(world, check);
    check_rooted_back_to_back(world, check);
    check_user_operators_of_one_name(world, check);
    code = check.finish("test_mpi_collectives");
  }
  return code;
}
