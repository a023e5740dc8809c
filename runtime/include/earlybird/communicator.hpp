// Communicator: a group of ranks that run collectives together. Collectives
// return a Future at once; several may be in flight on one communicator, and
// they match across ranks in submission order, as MPI's do.
#pragma once

#include <earlybird/future.hpp>
#include <earlybird/types.hpp>

#include <memory>
#include <span>
#include <type_traits>

namespace earlybird {

namespace detail {
class CommCore;
}

class Communicator {
 public:
  Communicator() = default;
  explicit Communicator(std::shared_ptr<detail::CommCore> core);

  int rank() const;
  int size() const;
  bool valid() const { return core_ != nullptr; }

  // out[i] = in_0[i] (op) in_1[i] (op) ... over all ranks. `in` and `out` have
  // equal length on every rank; they may be the same span (in place) but must
  // not partially overlap.
  template <class T>
  Future allreduce(std::span<const T> in, std::span<T> out, Op op, const AllreduceOptions& options = {}) {
    if (in.size() != out.size()) length_mismatch(in.size(), out.size());
    return allreduce(in.data(), out.data(), in.size(), datatype_of<T>(), op, options);
  }
  template <class T>
  Future allreduce(std::span<T> in, std::span<T> out, Op op, const AllreduceOptions& options = {}) {
    return allreduce(std::span<const T>(in), out, op, options);
  }
  // In place: `inout` holds this rank's input and receives the result.
  template <class T>
  Future allreduce(std::span<T> inout, Op op, const AllreduceOptions& options = {}) {
    return allreduce(inout.data(), inout.data(), inout.size(), datatype_of<T>(), op, options);
  }
  // Untyped form: `count` elements of `type`. `in` may equal `out`.
  Future allreduce(const void* in, void* out, std::size_t count, Datatype type, Op op,
                   const AllreduceOptions& options = {});

  // A new communicator over the ranks that pass the same `color`, ordered by
  // `key` (MPI_Comm_split semantics). Collective over this communicator.
  Communicator split(int color, int key) const;

  detail::CommCore& core() const { return *core_; }

 private:
  [[noreturn]] void length_mismatch(std::size_t in, std::size_t out) const;
  std::shared_ptr<detail::CommCore> core_;
};

}  // namespace earlybird
