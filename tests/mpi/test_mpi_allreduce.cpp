// MPI tier: earlybird's allreduce against MPI_Allreduce (and the exact oracle)
// for every algorithm, several types and ops, count classes, in place and not,
// back-to-back calls, several futures in flight, and split communicators.
// Run under mpirun for P in {1, 2, 3, 4, 5, 8} (see CMakeLists.txt).
#include "../common/oracle.hpp"
#include "mpi_check.hpp"
#include "mpi_types.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/earlybird.hpp>

#include <cstring>
#include <vector>

using namespace earlybird;
using earlybird::testing::count_wrong;
using earlybird::testing::make_input;
using earlybird::testing::MpiCheck;
using earlybird::testing::rank_in;
using earlybird::testing::mpi_op;
using earlybird::testing::mpi_type;

namespace {

struct Case {
  std::string algorithm;
  std::size_t count;
  bool in_place;
};

std::string describe(const Case& c, const char* type, Op op, MPI_Comm comm) {
  return c.algorithm + " count=" + std::to_string(c.count) + " type=" + type + " op=" + to_string(op) +
         (c.in_place ? " in-place" : "") + " P=" + std::to_string(rank_in(comm).size);
}

template <class T>
void check_case(Communicator& comm, MPI_Comm mpi_comm, const Case& c, Op op, MpiCheck& check) {
  const std::string what = describe(c, to_string(datatype_of<T>()), op, mpi_comm);
  std::vector<T> in = make_input<T>(comm.rank(), c.count, op);
  std::vector<T> reference(c.count);
  MPI_Allreduce(in.data(), reference.data(), static_cast<int>(c.count), mpi_type<T>(), mpi_op(op), mpi_comm);
  std::vector<T> out(c.count);
  CollectiveOptions options;
  options.algorithm = c.algorithm;
  Future f = c.in_place ? comm.allreduce(std::span<T>(in), op, options)
                        : comm.allreduce(std::span<const T>(in), std::span<T>(out), op, options);
  check.wait(f, what);
  const std::vector<T>& got = c.in_place ? in : out;
  check.expect(c.count == 0 || std::memcmp(got.data(), reference.data(), c.count * sizeof(T)) == 0,
               what + ": differs from MPI_Allreduce");
  check.expect(count_wrong(got, comm.size(), op) == 0, what + ": differs from the exact oracle");
}

void check_catalogue(Communicator& comm, MPI_Comm mpi_comm, MpiCheck& check) {
  const auto p = static_cast<std::size_t>(comm.size());
  int variant = 0;
  for (const auto& algorithm : coll::allreduce_algorithms())
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, p - 1, p, p + 1, std::size_t{1000}, std::size_t{65537}}) {
      const bool in_place = (variant++ % 2) == 1;
      const std::string name(algorithm.name);
      check_case<std::int32_t>(comm, mpi_comm, {name, count, in_place}, Op::sum, check);
      check_case<double>(comm, mpi_comm, {name, count, !in_place}, Op::sum, check);
      check_case<float>(comm, mpi_comm, {name, count, in_place}, Op::max, check);
      check_case<std::uint8_t>(comm, mpi_comm, {name, count, !in_place}, Op::bxor, check);
      check_case<std::int64_t>(comm, mpi_comm, {name, count, in_place}, Op::prod, check);
      check_case<std::uint16_t>(comm, mpi_comm, {name, count, !in_place}, Op::bor, check);
      check_case<std::int8_t>(comm, mpi_comm, {name, count, in_place}, Op::lxor, check);
    }
}

void check_back_to_back(Communicator& comm, MpiCheck& check) {
  for (int k = 0; k < 200; ++k) {
    std::vector<std::int32_t> v = make_input<std::int32_t>(comm.rank(), 1 + static_cast<std::size_t>(k % 17) * 9, Op::sum);
    check.wait(comm.allreduce(std::span<std::int32_t>(v), Op::sum), "back-to-back call " + std::to_string(k));
    check.expect(count_wrong(v, comm.size(), Op::sum) == 0, "back-to-back call " + std::to_string(k));
  }
}

void check_in_flight(Communicator& comm, MpiCheck& check) {
  constexpr int kInFlight = 16;
  std::vector<std::vector<double>> buffers;
  std::vector<Future> futures;
  for (int k = 0; k < kInFlight; ++k) {
    buffers.push_back(make_input<double>(comm.rank(), 10 + 311 * static_cast<std::size_t>(k), Op::sum));
    CollectiveOptions options;
    options.algorithm = std::string(coll::allreduce_algorithms()[static_cast<std::size_t>(k) % 3].name);
    futures.push_back(comm.allreduce(std::span<double>(buffers.back()), Op::sum, options));
  }
  for (int k = 0; k < kInFlight; ++k) {
    check.wait(futures[static_cast<std::size_t>(k)], "in-flight call " + std::to_string(k));
    check.expect(count_wrong(buffers[static_cast<std::size_t>(k)], comm.size(), Op::sum) == 0,
                 "in-flight call " + std::to_string(k));
  }
}

// Halves by `color`: alternate ranks, and consecutive pairs (on 2 x 2
// emulated hosts, a part inside one host: a hybrid communicator's part gets
// a shared window of its own, docs/design.md "Transports").
void check_split(Communicator& world, int color, MpiCheck& check) {
  Communicator half = world.split(color, -world.rank());  // reversed order inside each half
  MPI_Comm mpi_half;
  MPI_Comm_split(MPI_COMM_WORLD, color, -world.rank(), &mpi_half);
  int mpi_rank = -1;
  MPI_Comm_rank(mpi_half, &mpi_rank);
  check.expect(half.rank() == mpi_rank, "split: rank order follows the key");
  for (const auto& algorithm : coll::allreduce_algorithms())
    check_case<std::int32_t>(half, mpi_half, {std::string(algorithm.name), 4099, false}, Op::sum, check);
  MPI_Comm_free(&mpi_half);
}

}  // namespace

int main(int argc, char** argv) {
  int code = 1;
  {
    Runtime runtime(&argc, &argv);
    Communicator world = runtime.world();
    MpiCheck check(world.rank());
    check_catalogue(world, MPI_COMM_WORLD, check);
    check_back_to_back(world, check);
    check_in_flight(world, check);
    check_split(world, world.rank() % 2, check);
    check_split(world, world.rank() / 2, check);
    code = check.finish("test_mpi_allreduce");
  }
  return code;
}
