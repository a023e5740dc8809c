// MPI tier: collectives over buffers from earlybird::allocate_shared
// (earlybird/shared_memory.hpp), which node peers load from directly. Every
// collective's peer_reads entry and `auto` (CollectiveOptions::
// shared_buffers set), in place and not, several types, operators, counts
// and roots, against the MPI library's result; with every rank's buffers
// in its arena, and mixed (odd ranks' buffers ordinary memory: read by
// system call, or where none is allowed by whichever path works), and a
// non-commutative operator in rank order. With EARLYBIRD_SHARED_ARENA_GIB=0
// (a second ctest entry) allocate_shared hands out ordinary memory and the
// same calls hold.
#include "../common/concat_op.hpp"
#include "collective_checks.hpp"
#include "mpi_check.hpp"

#include <earlybird/earlybird.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace earlybird;
using namespace earlybird::testing;

namespace {

// Rank-order fold of a non-commutative operator through shared buffers.
void check_non_commutative(Communicator& comm, bool in_arena, MpiCheck& check) {
  using earlybird::testing::digits;
  using earlybird::testing::ordered_concatenation;
  const std::size_t n = 40000;  // past one fold chunk of int64
  const std::string what = std::string("concatenation allreduce peer_reads") + (in_arena ? " arena" : " ordinary");
  CallBuffer<std::int64_t> input(digits(comm.rank(), n), in_arena), output(n, in_arena);
  CollectiveOptions o;
  o.algorithm = "peer_reads";
  o.shared_buffers = true;
  check.wait(comm.allreduce(input.span(), output.span(), earlybird::testing::concatenation(), o), what);
  std::size_t wrong = 0;
  for (std::size_t k = 0; k < n; ++k) wrong += output.data()[k] != ordered_concatenation(comm.size(), k) ? 1 : 0;
  check.expect(wrong == 0, what + ": " + std::to_string(wrong) + " elements differ from the rank-order result");
}

// Every collective, the peer_reads entry and auto, with the hint on every
// rank; `mixed`: odd ranks' buffers are ordinary memory.
void check_all(Communicator& comm, bool mixed, MpiCheck& check) {
  const bool in_arena = !mixed || comm.rank() % 2 == 0;
  const auto p = static_cast<std::size_t>(comm.size());
  int variant = 0;
  for (const std::string algorithm : {"peer_reads", ""})
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, p + 1, std::size_t{1000}, std::size_t{300001}}) {
      const bool in_place = (variant++ % 2) == 1;
      const Setting s{algorithm, count, 0, in_place, in_arena, true};
      Setting flipped = s;
      flipped.in_place = !in_place;
      for (int root : roots(comm.size())) {
        Setting rooted = s;
        rooted.root = root;
        check_reduce<std::int32_t>(comm, rooted, Op::sum, check);
        check_reduce<double>(comm, rooted, Op::max, check);
        rooted.in_place = false;
        check_bcast<float>(comm, rooted, check);
      }
      check_allreduce<std::int32_t>(comm, s, Op::sum, check);
      check_allreduce<float>(comm, flipped, Op::min, check);
      check_allgather<std::int64_t>(comm, s, check);
      check_reduce_scatter<std::int32_t>(comm, s, Op::sum, check);
      check_reduce_scatter<std::uint8_t>(comm, flipped, Op::bxor, check);
    }
  check_non_commutative(comm, in_arena, check);
}

void check_arena(MpiCheck& check) {
  const char* gib = std::getenv("EARLYBIRD_SHARED_ARENA_GIB");
  const bool off = gib && std::string(gib) == "0";
  void* a = allocate_shared(1000);
  void* b = allocate_shared(0);
  check.expect(a && b && a != b, "allocate_shared returns distinct memory, also for 0 bytes");
  check.expect(reinterpret_cast<std::uintptr_t>(a) % 64 == 0 && reinterpret_cast<std::uintptr_t>(b) % 64 == 0,
               "allocate_shared aligns to 64 bytes");
  check.expect(in_shared_arena(a) == !off, off ? "EARLYBIRD_SHARED_ARENA_GIB=0: ordinary memory"
                                               : "allocate_shared's memory lies in the arena");
  free_shared(a);
  free_shared(b);
  free_shared(nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  int code = 1;
  {
    Runtime runtime(&argc, &argv);
    Communicator world = runtime.world();
    JobDeadline deadline(world.rank(), std::chrono::seconds(300));
    MpiCheck check(world.rank());
    check_arena(check);
    check_all(world, false, check);
    check_all(world, true, check);
    // A communicator made after buffers were allocated maps the same arenas.
    Communicator reversed = world.split(0, world.size() - world.rank());
    check_allreduce<std::int32_t>(reversed, {"peer_reads", 5000, 0, false, true, true}, Op::sum, check);
    code = check.finish("test_mpi_shared_buffers");
  }
  return code;
}
