// The collectives eb-bench sweeps, one table row each: how to call earlybird,
// how to call the MPI library's matching collective, and which ranks' output
// must agree. Every collective is float32 with MPI_SUM where it reduces;
// rooted collectives use the root the buffers name (eb-bench sweep --root);
// every collective may be called in place (eb-bench sweep --in-place).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/earlybird.hpp>
#include <memory>
#include <string>
#include <vector>

namespace earlybird::bench {

// How every call of a run is made: its root, and whether in place
// (MPI_IN_PLACE; earlybird's one-buffer calls). In place, the output holds
// the call's input before it: all of it (allreduce, reduce on the root,
// reduce_scatter, whose output is then P blocks with the result in the
// first), or this rank's block (allgather). A bcast always is.
struct CallForm {
  int root = 0;  // reduce, bcast
  bool in_place = false;
  // Input and output from earlybird::allocate_shared, for earlybird and MPI
  // alike (earlybird/shared_memory.hpp).
  bool shared_buffers = false;
};

// Ordinary memory, or earlybird::allocate_shared's where `shared`.
template <class T>
struct BenchAllocator {
  using value_type = T;
  // A buffer assigned a new one takes its allocator (make_buffers does).
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  bool shared = false;
  BenchAllocator() = default;
  explicit BenchAllocator(bool in_arena) : shared(in_arena) {}
  template <class U>
  BenchAllocator(const BenchAllocator<U>& other) noexcept : shared(other.shared) {}
  T* allocate(std::size_t n) { return shared ? SharedAllocator<T>().allocate(n) : std::allocator<T>().allocate(n); }
  void deallocate(T* memory, std::size_t n) noexcept {
    shared ? SharedAllocator<T>().deallocate(memory, n) : std::allocator<T>().deallocate(memory, n);
  }
  template <class U>
  bool operator==(const BenchAllocator<U>& other) const noexcept { return shared == other.shared; }
};
using FloatBuffer = std::vector<float, BenchAllocator<float>>;

// One rank's buffers for one collective call of `count` elements per rank
// (per block for allgather and reduce_scatter).
struct Buffers {
  std::size_t count = 0;
  int rank = 0;
  CallForm form;                 // the root and whether the call is in place
  FloatBuffer input;             // what this rank contributes (bcast: the root's message)
  FloatBuffer output;            // written by the call under test
  std::vector<float> reference;  // the MPI library's result, for checking
};

struct CollectiveSpec {
  coll::Collective kind;
  const char* name;                // "allreduce": the --collective value
  const char* arguments;           // "float32, sum": what every call reduces or moves
  const char* mpi_function;        // "MPI_Allreduce"
  const char* tuned_variable;      // Open MPI's control variable forcing a coll_tuned algorithm
  bool result_on_root_only;        // reduce: only the root's output is defined
  bool root_output_holds_message;  // bcast: the root's output buffer is the message before the call
  bool rooted() const { return result_on_root_only || root_output_holds_message; }
  // nccl-tests' bus bandwidth factor: busbw = factor(P) * bytes_moved / time.
  double (*bus_factor)(int ranks);
  Future (*earlybird_call)(Communicator& comm, Buffers& buffers, const CollectiveOptions& options);
  int (*mpi_call)(Buffers& buffers, MPI_Comm comm);  // returns the MPI error code
};

// The spec named `name`; throws std::invalid_argument listing the valid names.
const CollectiveSpec& collective_spec(const std::string& name);

// Every spec's name, in table order: the valid --collective values.
std::vector<std::string> collective_names();

// Buffers of the right lengths for `ranks` ranks, filled with small integers
// (sums stay exact in float, so every algorithm's result is bit-identical).
Buffers make_buffers(const CollectiveSpec& spec, int rank, int ranks, std::size_t count, CallForm form = {});

// Puts the output buffer in its state before a call: a sentinel everywhere
// (so a call that writes nothing is caught), the message on a bcast root,
// the input where an in-place call takes it (CallForm).
void reset_output(const CollectiveSpec& spec, Buffers& buffers);

// Whether this rank's output holds the expected result (true where the rank
// has no defined result).
bool output_matches(const CollectiveSpec& spec, const Buffers& buffers);

// The bytes one call moves in nccl-tests' algorithm bandwidth: the larger of
// the input and output buffers.
std::size_t moved_bytes(const CollectiveSpec& spec, int ranks, std::size_t count);

}  // namespace earlybird::bench
