// One call of each collective checked against the MPI library's own call on
// MPI_COMM_WORLD (the MPI tier: test_mpi_collectives.cpp,
// test_mpi_shared_buffers.cpp): in place or not, any root, this rank's
// buffers ordinary or from earlybird::allocate_shared; the result compared
// bit for bit. Inputs are the oracle's (../common/oracle.hpp), so a
// communicator of the world's ranks in another order gives the same
// commutative result.
#pragma once

#include "../common/oracle.hpp"
#include "mpi_check.hpp"
#include "mpi_types.hpp"

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/earlybird.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace earlybird::testing {

// `count` elements from earlybird::allocate_shared, or from malloc.
template <class T>
class CallBuffer {
 public:
  CallBuffer(std::size_t count, bool in_arena)
      : data_(static_cast<T*>(in_arena ? allocate_shared(count * sizeof(T))
                                       : std::malloc(std::max<std::size_t>(1, count) * sizeof(T)))),
        count_(count),
        in_arena_(in_arena) {}
  CallBuffer(const std::vector<T>& from, bool in_arena) : CallBuffer(from.size(), in_arena) {
    std::copy(from.begin(), from.end(), data_);
  }
  CallBuffer(const CallBuffer&) = delete;
  CallBuffer& operator=(const CallBuffer&) = delete;
  ~CallBuffer() { in_arena_ ? free_shared(data_) : std::free(data_); }
  std::span<T> span() { return {data_, count_}; }
  T* data() { return data_; }
  // The first `n` elements equal `v`'s.
  bool equals(const std::vector<T>& v, std::size_t n) const {
    return n <= count_ && n <= v.size() && (n == 0 || std::memcmp(data_, v.data(), n * sizeof(T)) == 0);
  }

 private:
  T* data_;
  std::size_t count_;
  bool in_arena_;
};

struct Setting {
  std::string algorithm;  // a catalogue name; "": auto
  std::size_t count;      // per rank (allgather, reduce_scatter: per block)
  int root = 0;
  bool in_place = false;
  bool in_arena = false;     // this rank's buffers from allocate_shared
  bool shared_hint = false;  // CollectiveOptions::shared_buffers, alike on every rank
};

inline CollectiveOptions options_for(const Setting& s) {
  CollectiveOptions o;
  o.algorithm = s.algorithm;
  o.shared_buffers = s.shared_hint;
  return o;
}

inline std::string describe(coll::Collective c, const Setting& s, const char* type, const std::string& op, int ranks) {
  return std::string(coll::to_string(c)) + " " + (s.algorithm.empty() ? "auto" : s.algorithm) +
         " count=" + std::to_string(s.count) + " root=" + std::to_string(s.root) + " type=" + type + " op=" + op +
         (s.in_place ? " in-place" : "") + (s.in_arena ? " arena" : "") + (s.shared_hint ? " hint" : "") +
         " P=" + std::to_string(ranks);
}

template <class T>
void check_allreduce(Communicator& comm, const Setting& s, Op op, MpiCheck& check) {
  const std::string what = describe(coll::Collective::allreduce, s, to_string(datatype_of<T>()), to_string(op), comm.size());
  const std::vector<T> in = make_input<T>(comm.rank(), s.count, op);
  std::vector<T> reference(s.count);
  MPI_Allreduce(in.data(), reference.data(), static_cast<int>(s.count), mpi_type<T>(), mpi_op(op), MPI_COMM_WORLD);
  CallBuffer<T> input(in, s.in_arena), output(s.count, s.in_arena);
  CallBuffer<T>& result = s.in_place ? input : output;
  check.wait(comm.allreduce(input.span(), result.span(), op, options_for(s)), what);
  check.expect(result.equals(reference, s.count), what + ": differs from MPI_Allreduce");
}

template <class T>
void check_reduce(Communicator& comm, const Setting& s, Op op, MpiCheck& check) {
  const std::string what = describe(coll::Collective::reduce, s, to_string(datatype_of<T>()), to_string(op), comm.size());
  const std::vector<T> in = make_input<T>(comm.rank(), s.count, op);
  std::vector<T> reference(s.count);
  MPI_Reduce(in.data(), reference.data(), static_cast<int>(s.count), mpi_type<T>(), mpi_op(op), s.root, MPI_COMM_WORLD);
  const bool root = comm.rank() == s.root;
  CallBuffer<T> input(in, s.in_arena), output(s.count, s.in_arena);
  CallBuffer<T>& result = root && s.in_place ? input : output;
  check.wait(comm.reduce(input.span(), result.span(), op, s.root, options_for(s)), what);
  if (root) check.expect(result.equals(reference, s.count), what + ": differs from MPI_Reduce");
}

template <class T>
void check_bcast(Communicator& comm, const Setting& s, MpiCheck& check) {
  const std::string what = describe(coll::Collective::bcast, s, to_string(datatype_of<T>()), "-", comm.size());
  const std::vector<T> source = make_input<T>(s.root, s.count, Op::sum);
  CallBuffer<T> buffer(comm.rank() == s.root ? source : std::vector<T>(s.count, T{42}), s.in_arena);
  check.wait(comm.bcast(buffer.span(), s.root, options_for(s)), what);
  check.expect(buffer.equals(source, s.count), what + ": differs from the root's buffer");
}

template <class T>
void check_allgather(Communicator& comm, const Setting& s, MpiCheck& check) {
  const std::string what = describe(coll::Collective::allgather, s, to_string(datatype_of<T>()), "-", comm.size());
  const std::vector<T> in = make_input<T>(comm.rank(), s.count, Op::sum);
  const std::size_t total = s.count * static_cast<std::size_t>(comm.size());
  std::vector<T> reference(total);
  MPI_Allgather(in.data(), static_cast<int>(s.count), mpi_type<T>(), reference.data(), static_cast<int>(s.count),
                mpi_type<T>(), MPI_COMM_WORLD);
  CallBuffer<T> input(in, s.in_arena), output(total, s.in_arena);
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
  const std::string what =
      describe(coll::Collective::reduce_scatter, s, to_string(datatype_of<T>()), to_string(op), comm.size());
  const std::vector<T> in = make_input<T>(comm.rank(), s.count * static_cast<std::size_t>(comm.size()), op);
  std::vector<T> reference(s.count);
  MPI_Reduce_scatter_block(in.data(), reference.data(), static_cast<int>(s.count), mpi_type<T>(), mpi_op(op),
                           MPI_COMM_WORLD);
  CallBuffer<T> input(in, s.in_arena), output(s.count, s.in_arena);
  // In place: input from the whole buffer, result in its first block.
  CallBuffer<T>& result = s.in_place ? input : output;
  const Future f = s.in_place ? comm.reduce_scatter(input.span(), op, options_for(s))
                              : comm.reduce_scatter(input.span(), output.span(), op, options_for(s));
  check.wait(f, what);
  check.expect(result.equals(reference, s.count), what + ": differs from MPI_Reduce_scatter_block");
}

// Roots worth trying on P ranks: the first, the last, one in the middle.
inline std::vector<int> roots(int p) {
  std::vector<int> r{0};
  if (p > 1) r.push_back(p - 1);
  if (p > 2) r.push_back(p / 2);
  return r;
}

}  // namespace earlybird::testing
