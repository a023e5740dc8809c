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
#include "../common/oracle.hpp"
#include "mpi_check.hpp"
#include "mpi_types.hpp"

#include <earlybird/earlybird.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace earlybird;
using coll::Collective;
using earlybird::testing::make_input;
using earlybird::testing::MpiCheck;
using earlybird::testing::mpi_op;
using earlybird::testing::mpi_type;

namespace {

// `count` elements from allocate_shared, or from malloc where !shared.
template <class T>
class Memory {
 public:
  Memory(std::size_t count, bool shared)
      : data_(static_cast<T*>(shared ? allocate_shared(count * sizeof(T)) : std::malloc(std::max<std::size_t>(1, count) * sizeof(T)))),
        count_(count),
        shared_(shared) {}
  Memory(const std::vector<T>& from, bool shared) : Memory(from.size(), shared) {
    std::copy(from.begin(), from.end(), data_);
  }
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;
  ~Memory() { shared_ ? free_shared(data_) : std::free(data_); }
  std::span<T> span() { return {data_, count_}; }
  T* data() { return data_; }
  bool equals(const std::vector<T>& v, std::size_t n) const {
    return n <= count_ && n <= v.size() && (n == 0 || std::memcmp(data_, v.data(), n * sizeof(T)) == 0);
  }

 private:
  T* data_;
  std::size_t count_;
  bool shared_;
};

struct Setting {
  std::string algorithm;  // "" : auto
  std::size_t count;
  int root;
  bool in_place;
  bool shared;  // this rank's buffers from allocate_shared
};

CollectiveOptions options_for(const Setting& s) {
  CollectiveOptions o;
  o.algorithm = s.algorithm;
  o.shared_buffers = true;
  return o;
}

std::string describe(Collective c, const Setting& s, const char* type, int ranks) {
  return std::string(coll::to_string(c)) + " " + (s.algorithm.empty() ? "auto" : s.algorithm) +
         " count=" + std::to_string(s.count) + " root=" + std::to_string(s.root) + " type=" + type +
         (s.in_place ? " in-place" : "") + (s.shared ? " shared" : " ordinary") + " P=" + std::to_string(ranks);
}

template <class T>
void check_allreduce(Communicator& comm, const Setting& s, Op op, MpiCheck& check) {
  const std::string what = describe(Collective::allreduce, s, to_string(datatype_of<T>()), comm.size());
  const std::vector<T> in = make_input<T>(comm.rank(), s.count, op);
  std::vector<T> reference(s.count);
  MPI_Allreduce(in.data(), reference.data(), static_cast<int>(s.count), mpi_type<T>(), mpi_op(op), MPI_COMM_WORLD);
  Memory<T> input(in, s.shared), output(s.count, s.shared);
  Memory<T>& result = s.in_place ? input : output;
  check.wait(comm.allreduce(input.span(), result.span(), op, options_for(s)), what);
  check.expect(result.equals(reference, s.count), what + ": differs from MPI_Allreduce");
}

template <class T>
void check_reduce(Communicator& comm, const Setting& s, Op op, MpiCheck& check) {
  const std::string what = describe(Collective::reduce, s, to_string(datatype_of<T>()), comm.size());
  const std::vector<T> in = make_input<T>(comm.rank(), s.count, op);
  std::vector<T> reference(s.count);
  MPI_Reduce(in.data(), reference.data(), static_cast<int>(s.count), mpi_type<T>(), mpi_op(op), s.root, MPI_COMM_WORLD);
  const bool root = comm.rank() == s.root;
  Memory<T> input(in, s.shared), output(s.count, s.shared);
  Memory<T>& result = root && s.in_place ? input : output;
  check.wait(comm.reduce(input.span(), result.span(), op, s.root, options_for(s)), what);
  if (root) check.expect(result.equals(reference, s.count), what + ": differs from MPI_Reduce");
}

template <class T>
void check_bcast(Communicator& comm, const Setting& s, MpiCheck& check) {
  const std::string what = describe(Collective::bcast, s, to_string(datatype_of<T>()), comm.size());
  const std::vector<T> source = make_input<T>(s.root, s.count, Op::sum);
  Memory<T> buffer(comm.rank() == s.root ? source : std::vector<T>(s.count, T{42}), s.shared);
  check.wait(comm.bcast(buffer.span(), s.root, options_for(s)), what);
  check.expect(buffer.equals(source, s.count), what + ": differs from the root's buffer");
}

template <class T>
void check_allgather(Communicator& comm, const Setting& s, MpiCheck& check) {
  const std::string what = describe(Collective::allgather, s, to_string(datatype_of<T>()), comm.size());
  const std::vector<T> in = make_input<T>(comm.rank(), s.count, Op::sum);
  const std::size_t total = s.count * static_cast<std::size_t>(comm.size());
  std::vector<T> reference(total);
  MPI_Allgather(in.data(), static_cast<int>(s.count), mpi_type<T>(), reference.data(), static_cast<int>(s.count),
                mpi_type<T>(), MPI_COMM_WORLD);
  Memory<T> input(in, s.shared), output(total, s.shared);
  if (s.in_place) {  // this rank's block of the output holds its input
    std::copy(in.begin(), in.end(), output.data() + s.count * static_cast<std::size_t>(comm.rank()));
    check.wait(comm.allgather(output.span(), options_for(s)), what);
  } else {
    check.wait(comm.allgather(input.span(), output.span(), options_for(s)), what);
  }
  check.expect(output.equals(reference, total), what + ": differs from MPI_Allgather");
}

template <class T>
void check_reduce_scatter(Communicator& comm, const Setting& s, Op op, MpiCheck& check) {
  const std::string what = describe(Collective::reduce_scatter, s, to_string(datatype_of<T>()), comm.size());
  const std::vector<T> in = make_input<T>(comm.rank(), s.count * static_cast<std::size_t>(comm.size()), op);
  std::vector<T> reference(s.count);
  MPI_Reduce_scatter_block(in.data(), reference.data(), static_cast<int>(s.count), mpi_type<T>(), mpi_op(op),
                           MPI_COMM_WORLD);
  Memory<T> input(in, s.shared), output(s.count, s.shared);
  if (s.in_place) {  // input from the whole buffer, result in its first block
    check.wait(comm.reduce_scatter(input.span(), op, options_for(s)), what);
    check.expect(input.equals(reference, s.count), what + ": differs from MPI_Reduce_scatter_block");
  } else {
    check.wait(comm.reduce_scatter(input.span(), output.span(), op, options_for(s)), what);
    check.expect(output.equals(reference, s.count), what + ": differs from MPI_Reduce_scatter_block");
  }
}

// Rank-order fold of a non-commutative operator through shared buffers.
void check_non_commutative(Communicator& comm, bool shared, MpiCheck& check) {
  using earlybird::testing::digits;
  using earlybird::testing::ordered_concatenation;
  const std::size_t n = 40000;  // past one fold chunk of int64
  const std::string what = std::string("concatenation allreduce peer_reads") + (shared ? " shared" : " mixed");
  Memory<std::int64_t> input(digits(comm.rank(), n), shared), output(n, shared);
  CollectiveOptions o;
  o.algorithm = "peer_reads";
  o.shared_buffers = true;
  check.wait(comm.allreduce(input.span(), output.span(), earlybird::testing::concatenation(), o), what);
  std::size_t wrong = 0;
  for (std::size_t k = 0; k < n; ++k) wrong += output.data()[k] != ordered_concatenation(comm.size(), k) ? 1 : 0;
  check.expect(wrong == 0, what + ": " + std::to_string(wrong) + " elements differ from the rank-order result");
}

std::vector<int> roots(int p) {
  std::vector<int> r{0};
  if (p > 1) r.push_back(p - 1);
  return r;
}

void check_all(Communicator& comm, bool mixed, MpiCheck& check) {
  const bool shared = !mixed || comm.rank() % 2 == 0;
  const auto p = static_cast<std::size_t>(comm.size());
  int variant = 0;
  for (const std::string algorithm : {"peer_reads", ""})
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, p + 1, std::size_t{1000}, std::size_t{300001}}) {
      const bool in_place = (variant++ % 2) == 1;
      for (int root : roots(comm.size())) {
        const Setting s{algorithm, count, root, in_place, shared};
        check_reduce<std::int32_t>(comm, s, Op::sum, check);
        check_reduce<double>(comm, s, Op::max, check);
        check_bcast<float>(comm, {algorithm, count, root, false, shared}, check);
      }
      const Setting s{algorithm, count, 0, in_place, shared};
      check_allreduce<std::int32_t>(comm, s, Op::sum, check);
      check_allreduce<float>(comm, {algorithm, count, 0, !in_place, shared}, Op::min, check);
      check_allgather<std::int64_t>(comm, s, check);
      check_reduce_scatter<std::int32_t>(comm, s, Op::sum, check);
      check_reduce_scatter<std::uint8_t>(comm, {algorithm, count, 0, !in_place, shared}, Op::bxor, check);
    }
  check_non_commutative(comm, shared, check);
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
  int provided = 0;
  setenv("OMPI_MCA_osc_rdma_priority", "1", 0);  // as Runtime does (test_mpi_warmup.cpp)
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int code = 1;
  {
    earlybird::testing::JobDeadline deadline(rank, std::chrono::seconds(300));
    MpiCheck check(rank);
    check_arena(check);
    {
      Runtime runtime(&argc, &argv);
      Communicator world = runtime.world();
      check_all(world, false, check);
      check_all(world, true, check);
      // A communicator made after buffers were allocated maps the same arenas.
      Communicator reversed = world.split(0, world.size() - world.rank());
      check_allreduce<std::int32_t>(reversed, {"peer_reads", 5000, 0, false, true}, Op::sum, check);
    }
    code = check.finish("test_mpi_shared_buffers");
  }
  MPI_Finalize();
  return code;
}
