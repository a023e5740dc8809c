// Element types, reduction operators and per-call options of the public API.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include <type_traits>

namespace earlybird {

// The basic MPI types earlybird reduces natively.
enum class Datatype : std::uint8_t {
  int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64
};

// The predefined MPI operators (MPI_SUM ... MPI_BXOR).
enum class Op : std::uint8_t { sum, prod, min, max, land, lor, lxor, band, bor, bxor };

std::size_t size_of(Datatype type);
const char* to_string(Datatype type);
const char* to_string(Op op);
// Whether `op` is defined for `type` (as in MPI: no logical or bitwise
// operators on floating-point types).
bool op_supports(Op op, Datatype type);

template <class T>
constexpr Datatype datatype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>) return Datatype::float32;
  else if constexpr (std::is_same_v<U, double>) return Datatype::float64;
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 1) return Datatype::int8;
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 2) return Datatype::int16;
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 4) return Datatype::int32;
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 8) return Datatype::int64;
  else if constexpr (std::is_integral_v<U> && std::is_unsigned_v<U> && sizeof(U) == 1) return Datatype::uint8;
  else if constexpr (std::is_integral_v<U> && std::is_unsigned_v<U> && sizeof(U) == 2) return Datatype::uint16;
  else if constexpr (std::is_integral_v<U> && std::is_unsigned_v<U> && sizeof(U) == 4) return Datatype::uint32;
  else if constexpr (std::is_integral_v<U> && std::is_unsigned_v<U> && sizeof(U) == 8) return Datatype::uint64;
  else static_assert(sizeof(U) == 0, "earlybird: unsupported element type");
}

// A reduction operator: one of the predefined ones (implicitly from Op), or a
// user-defined one over typed spans with a commutativity flag. A user function
// computes out[i] = left[i] (op) right[i]; `out` may be the same memory as
// `left` or `right`. Non-commutative operators get rank order: the result is
// in_0 op in_1 op ... op in_(P-1), and only algorithms that keep that order
// accept them.
class ReduceOp {
 public:
  ReduceOp(Op op) : builtin_(op) {}  // NOLINT(google-explicit-constructor): Op converts freely

  template <class T, class F>
  static ReduceOp user(F fn, bool commutative, std::string name = "user") {
    ReduceOp op(Op::sum);
    auto apply = [fn](const void* left, const void* right, void* out, std::size_t n) {
      fn(std::span<const T>(static_cast<const T*>(left), n), std::span<const T>(static_cast<const T*>(right), n),
         std::span<T>(static_cast<T*>(out), n));
    };
    op.user_ = std::make_shared<const User>(User{std::move(apply), datatype_of<T>(), commutative, std::move(name)});
    return op;
  }

  bool is_user() const { return user_ != nullptr; }
  bool commutative() const { return !user_ || user_->commutative; }
  Op builtin() const { return builtin_; }
  // The element type a user operator was written for.
  Datatype user_type() const { return user_ ? user_->type : Datatype::int8; }
  // "sum", "max", ... or the user operator's name.
  std::string name() const;
  // Whether this operator can reduce elements of `type`.
  bool supports(Datatype type) const;
  // out[i] = left[i] op right[i] for n elements of `type`.
  void apply(Datatype type, void* out, const void* left, const void* right, std::size_t n) const;

 private:
  // A user-defined operator, shared by the copies of its ReduceOp: a call
  // with a built-in operator copies and destroys two words, not a function
  // and a name.
  struct User {
    std::function<void(const void*, const void*, void*, std::size_t)> fn;
    Datatype type;
    bool commutative;
    std::string name;
  };
  Op builtin_;
  std::shared_ptr<const User> user_;
};

// Options of every collective call.
struct CollectiveOptions {
  // Catalogue name (docs/algorithms.md); empty or "auto": earlybird chooses
  // (the cost model), for a non-commutative operator among the order-keeping
  // algorithms.
  std::string algorithm;
  // Pipelining unit for segmented algorithms; 0: the algorithm's default.
  std::size_t segment_bytes = 0;
  // Fan-out of k-ary trees; 0: the algorithm's default.
  int fanout = 0;
  // Watchdog for this call; zero: the communicator's default.
  std::chrono::milliseconds timeout{0};
  // Straggler report: a call still waiting this long after it started records
  // which ranks have not arrived (Communicator::straggler_report) and, with
  // EARLYBIRD_VERBOSE=1, logs it. Zero: EARLYBIRD_STRAGGLER_MS, else off.
  std::chrono::milliseconds straggler_after{0};
  // The caller waits for the Future at once, as MPI's blocking calls do (the
  // PMPI library sets it): on an idle communicator the call runs on the
  // calling thread whatever its size. Without it a call of more than 64 KiB
  // goes to the progress thread, so that the caller may compute meanwhile.
  // A partitioned allreduce ignores it (each ready() returns at once).
  bool blocking = false;
  // Every rank's buffers for this call come from earlybird::allocate_shared
  // (earlybird/shared_memory.hpp): on one node, peers then load from them
  // directly, and `auto` prices the peer_reads algorithms accordingly. Set it
  // alike on every rank (the choice must agree); a buffer not in the arena
  // still works, at the system call's cost.
  bool shared_buffers = false;
};

// Which ranks a collective was waiting for (Communicator::straggler_report).
struct StragglerReport {
  std::string collective;        // the call, as error messages describe it
  std::uint64_t sequence = 0;    // its sequence number on the communicator
  std::chrono::milliseconds waited{0};
  std::vector<int> not_arrived;  // ranks that had not yet called it, ascending
};

// What the last arrival-ordered allreduce on a communicator ran, as this rank
// saw it (Communicator::last_decision): for tests and diagnostics.
struct ArrivalDecision {
  std::string algorithm;  // the catalogue entry that ran (for auto_pap: the one it chose)
  // The rank at each arrival position (virtual rank); -1 where this rank never
  // needed to learn it (ticket-bound algorithms learn holders as they arrive).
  std::vector<int> order;
  std::vector<std::uint32_t> presteps;  // pre_reduced_ring's k by position; empty otherwise
  bool decided_here = false;            // this rank arrived first and decided
  // On the deciding rank: each rank's arrival estimate it used, in global
  // microseconds (nullopt: none published in time); empty elsewhere.
  std::vector<std::optional<std::int64_t>> estimates;
};

}  // namespace earlybird
