// Communicator: a group of ranks that run collectives together. Collectives
// return a Future at once; several may be in flight on one communicator, and
// they match across ranks in submission order, as MPI's do. Every rank must
// make the same calls (collective, count, type, operator, root, algorithm).
#pragma once

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/future.hpp>
#include <earlybird/partitioned.hpp>
#include <earlybird/persistent.hpp>
#include <earlybird/tune.hpp>
#include <earlybird/types.hpp>

#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

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
  // False for a default-constructed or moved-from handle: its collectives
  // return failed Futures, its other members throw earlybird::Error.
  bool valid() const { return core_ != nullptr; }

  // --- allreduce: out[i] = in_0[i] op in_1[i] op ... op in_(P-1)[i] on every rank.
  // `in` and `out` have equal length; they may be one span (in place) but
  // must not partially overlap.
  template <class T>
  Future allreduce(std::span<const T> in, std::span<T> out, ReduceOp op, const CollectiveOptions& options = {}) {
    if (in.size() != out.size()) length_mismatch("allreduce", in.size(), out.size());
    return allreduce(in.data(), out.data(), in.size(), datatype_of<T>(), std::move(op), options);
  }
  template <class T>
  Future allreduce(std::span<T> in, std::span<T> out, ReduceOp op, const CollectiveOptions& options = {}) {
    return allreduce(std::span<const T>(in), out, std::move(op), options);
  }
  template <class T>  // in place
  Future allreduce(std::span<T> inout, ReduceOp op, const CollectiveOptions& options = {}) {
    return allreduce(inout.data(), inout.data(), inout.size(), datatype_of<T>(), std::move(op), options);
  }
  Future allreduce(const void* in, void* out, std::size_t count, Datatype type, ReduceOp op,
                   const CollectiveOptions& options = {});

  // --- reduce: out[i] on `root` = in_0[i] op ... op in_(P-1)[i]. `out` is
  // used on the root only (other ranks may pass an empty span); on the root
  // `in` and `out` may be one span (in place).
  template <class T>
  Future reduce(std::span<const T> in, std::span<T> out, ReduceOp op, int root, const CollectiveOptions& options = {}) {
    if (rank() == root && in.size() != out.size()) length_mismatch("reduce", in.size(), out.size());
    return reduce(in.data(), out.data(), in.size(), datatype_of<T>(), std::move(op), root, options);
  }
  template <class T>
  Future reduce(std::span<T> in, std::span<T> out, ReduceOp op, int root, const CollectiveOptions& options = {}) {
    return reduce(std::span<const T>(in), out, std::move(op), root, options);
  }
  Future reduce(const void* in, void* out, std::size_t count, Datatype type, ReduceOp op, int root,
                const CollectiveOptions& options = {});

  // --- bcast: `buffer` on every rank receives `root`'s buffer.
  template <class T>
  Future bcast(std::span<T> buffer, int root, const CollectiveOptions& options = {}) {
    return bcast(buffer.data(), buffer.size(), datatype_of<T>(), root, options);
  }
  Future bcast(void* buffer, std::size_t count, Datatype type, int root, const CollectiveOptions& options = {});

  // --- allgather: out (P x n) holds every rank's `in` (n), rank j's in block j.
  template <class T>
  Future allgather(std::span<const T> in, std::span<T> out, const CollectiveOptions& options = {}) {
    if (out.size() != in.size() * static_cast<std::size_t>(size()))
      length_mismatch("allgather (output must be P x input)", in.size() * static_cast<std::size_t>(size()), out.size());
    return allgather(in.data(), out.data(), in.size(), datatype_of<T>(), options);
  }
  template <class T>
  Future allgather(std::span<T> in, std::span<T> out, const CollectiveOptions& options = {}) {
    return allgather(std::span<const T>(in), out, options);
  }
  // In place (MPI_IN_PLACE): `inout` (P x n) holds this rank's input in its
  // own block r and receives every rank's block.
  template <class T>
  Future allgather(std::span<T> inout, const CollectiveOptions& options = {}) {
    if (inout.size() % static_cast<std::size_t>(size()) != 0)
      length_mismatch("allgather in place (length must be a multiple of P)", inout.size() / static_cast<std::size_t>(size()) * static_cast<std::size_t>(size()), inout.size());
    return allgather_in_place(inout.data(), inout.size() / static_cast<std::size_t>(size()), datatype_of<T>(), options);
  }
  Future allgather(const void* in, void* out, std::size_t count, Datatype type, const CollectiveOptions& options = {});
  Future allgather_in_place(void* inout, std::size_t count, Datatype type, const CollectiveOptions& options = {});

  // --- reduce_scatter (block): in (P x n); rank r's out (n) = the reduction of
  // every rank's block r.
  template <class T>
  Future reduce_scatter(std::span<const T> in, std::span<T> out, ReduceOp op, const CollectiveOptions& options = {}) {
    if (in.size() != out.size() * static_cast<std::size_t>(size()))
      length_mismatch("reduce_scatter (input must be P x output)", out.size() * static_cast<std::size_t>(size()), in.size());
    return reduce_scatter(in.data(), out.data(), out.size(), datatype_of<T>(), std::move(op), options);
  }
  template <class T>
  Future reduce_scatter(std::span<T> in, std::span<T> out, ReduceOp op, const CollectiveOptions& options = {}) {
    return reduce_scatter(std::span<const T>(in), out, std::move(op), options);
  }
  // In place (MPI_IN_PLACE): `inout` (P x n) is this rank's input; the
  // result (n) lands in its first n elements.
  template <class T>
  Future reduce_scatter(std::span<T> inout, ReduceOp op, const CollectiveOptions& options = {}) {
    if (inout.size() % static_cast<std::size_t>(size()) != 0)
      length_mismatch("reduce_scatter in place (length must be a multiple of P)", inout.size() / static_cast<std::size_t>(size()) * static_cast<std::size_t>(size()), inout.size());
    return reduce_scatter_in_place(inout.data(), inout.size() / static_cast<std::size_t>(size()), datatype_of<T>(), std::move(op), options);
  }
  Future reduce_scatter(const void* in, void* out, std::size_t count, Datatype type, ReduceOp op,
                        const CollectiveOptions& options = {});
  Future reduce_scatter_in_place(void* inout, std::size_t count, Datatype type, ReduceOp op,
                                 const CollectiveOptions& options = {});

  // --- sum of outer products (DSOP, seed 004): g = sum over ranks r of
  // a_r b_r^T on every rank, a of N elements, b of M, g N x M row-major (N
  // and M the same on every rank; g must not overlap a or b). Integer sums
  // wrap. options.algorithm: allgather, allreduce, allreduce_ring,
  // generalized_rabenseifner (docs/algorithms.md, "DSOP"), or empty: the cost
  // model's choice; the other options apply to every collective it runs. A
  // collective call like the others (same order on every rank); a and b are
  // copied before it returns; g is complete when the Future is.
  // T is deduced from g alone: a and b may be any contiguous range of T
  // (sum_outer_products<double>(a, b, g) with vectors).
  template <class T>
  Future sum_outer_products(std::span<const std::type_identity_t<T>> a, std::span<const std::type_identity_t<T>> b,
                            std::span<T> g, const CollectiveOptions& options = {}) {
    if (g.size() != a.size() * b.size()) length_mismatch("sum_outer_products", a.size() * b.size(), g.size());
    return sum_outer_products(a.data(), b.data(), g.data(), a.size(), b.size(), datatype_of<T>(), options);
  }
  Future sum_outer_products(const void* a, const void* b, void* g, std::size_t rows, std::size_t cols, Datatype type,
                            const CollectiveOptions& options = {});

  // --- persistent collectives (persistent.hpp): prepared here, once, with
  // the buffers' addresses; each start() runs the collective. Local: no
  // communication until a start.
  template <class T>
  PersistentCollective allreduce_init(std::span<const T> in, std::span<T> out, ReduceOp op,
                                      const CollectiveOptions& options = {}) {
    if (in.size() != out.size()) length_mismatch("allreduce_init", in.size(), out.size());
    return allreduce_init(in.data(), out.data(), in.size(), datatype_of<T>(), std::move(op), options);
  }
  template <class T>
  PersistentCollective allreduce_init(std::span<T> in, std::span<T> out, ReduceOp op,
                                      const CollectiveOptions& options = {}) {
    return allreduce_init(std::span<const T>(in), out, std::move(op), options);
  }
  template <class T>  // in place
  PersistentCollective allreduce_init(std::span<T> inout, ReduceOp op, const CollectiveOptions& options = {}) {
    return allreduce_init(inout.data(), inout.data(), inout.size(), datatype_of<T>(), std::move(op), options);
  }
  PersistentCollective allreduce_init(const void* in, void* out, std::size_t count, Datatype type, ReduceOp op,
                                      const CollectiveOptions& options = {});
  template <class T>
  PersistentCollective reduce_init(std::span<const T> in, std::span<T> out, ReduceOp op, int root,
                                   const CollectiveOptions& options = {}) {
    if (rank() == root && in.size() != out.size()) length_mismatch("reduce_init", in.size(), out.size());
    return reduce_init(in.data(), out.data(), in.size(), datatype_of<T>(), std::move(op), root, options);
  }
  template <class T>
  PersistentCollective reduce_init(std::span<T> in, std::span<T> out, ReduceOp op, int root,
                                   const CollectiveOptions& options = {}) {
    return reduce_init(std::span<const T>(in), out, std::move(op), root, options);
  }
  PersistentCollective reduce_init(const void* in, void* out, std::size_t count, Datatype type, ReduceOp op,
                                   int root, const CollectiveOptions& options = {});
  template <class T>
  PersistentCollective bcast_init(std::span<T> buffer, int root, const CollectiveOptions& options = {}) {
    return bcast_init(buffer.data(), buffer.size(), datatype_of<T>(), root, options);
  }
  PersistentCollective bcast_init(void* buffer, std::size_t count, Datatype type, int root,
                                  const CollectiveOptions& options = {});

  // --- partitioned allreduce (partitioned.hpp): the vector in consecutive
  // parts of `part_counts` elements (summing to its length), or `parts`
  // parts of equal length (the first ones one element longer when it does
  // not divide); each part reduced once ready() on every rank.
  template <class T>
  PartitionedCollective allreduce_partitioned(std::span<const T> in, std::span<T> out, ReduceOp op,
                                              std::vector<std::size_t> part_counts,
                                              const CollectiveOptions& options = {}) {
    if (in.size() != out.size()) length_mismatch("allreduce_partitioned", in.size(), out.size());
    return allreduce_partitioned(in.data(), out.data(), std::move(part_counts), in.size(), datatype_of<T>(),
                                 std::move(op), options);
  }
  template <class T>  // in place
  PartitionedCollective allreduce_partitioned(std::span<T> inout, ReduceOp op, std::vector<std::size_t> part_counts,
                                              const CollectiveOptions& options = {}) {
    return allreduce_partitioned(inout.data(), inout.data(), std::move(part_counts), inout.size(),
                                 datatype_of<T>(), std::move(op), options);
  }
  template <class T>  // in place, equal parts
  PartitionedCollective allreduce_partitioned(std::span<T> inout, ReduceOp op, std::size_t parts,
                                              const CollectiveOptions& options = {}) {
    return allreduce_partitioned(inout, std::move(op), equal_parts(inout.size(), parts), options);
  }
  // `count` is the whole vector's length; the parts must sum to it.
  PartitionedCollective allreduce_partitioned(const void* in, void* out, std::vector<std::size_t> part_counts,
                                              std::size_t count, Datatype type, ReduceOp op,
                                              const CollectiveOptions& options = {});
  // `parts` consecutive lengths summing to `count`, the first count % parts
  // one longer; none when parts is 0.
  static std::vector<std::size_t> equal_parts(std::size_t count, std::size_t parts);

  // --- arrival-pattern monitoring. Compute code reports its progress so that
  // arrival-ordered allreduce algorithms (sorted_linear_tree,
  // pre_reduced_ring, auto_pap) know when each rank will arrive:
  // phase_begin() when a compute phase starts, edge(f) when a fraction f
  // (0 < f <= 1) of it is done, phase_end() when it ends. At edge() the rank's
  // arrival estimate, begin + elapsed / f, is published to every rank, and the
  // connections of the coming collective are warmed up (see warm_up()).
  // Optional: without estimates those algorithms fall back to rank order on
  // every rank.
  void phase_begin();
  void edge(double fraction);
  void phase_end();
  // The most recent straggler report on this communicator (see
  // CollectiveOptions::straggler_after); empty if no call waited that long.
  std::optional<StragglerReport> straggler_report() const;
  // What the last arrival-ordered allreduce on this communicator ran, as this
  // rank saw it (algorithm, arrival order, pre-steps, and on the rank that
  // decided the estimates it used); empty before the first one finished. An
  // auto_pap call too small for the arrival board to pay (it ran auto's
  // static choice instead) is not an arrival-ordered one here.
  std::optional<ArrivalDecision> last_decision() const;

  // --- warm-up. The first message between two processes across nodes pays
  // for setting up their connection (MPI libraries connect at first use).
  // warm_up() makes one round trip (a read of a word of the peer's window) to
  // every rank the common algorithms talk to — rank ± 2^k mod P for 2^k < P:
  // ring, binomial trees, Bruck, and the butterflies at power-of-two P — on
  // the progress thread, when it reaches this request (requests on a
  // communicator are taken in submission order; a collective submitted
  // earlier may still be running), while the caller goes on; then, on
  // threads of its own, it makes `auto`'s choice for every collective and size
  // class up to 64 MiB on a communicator of this size and level (the cost
  // model's ranking, otherwise made by the first call of each class: 40-150
  // us a class at P = 2, milliseconds at P = 64; cached for the process, so
  // later communicators of the same size and level find them made). The
  // future completes when both are done, or fails naming the operation,
  // the rank and the cause (a peer that does not answer within
  // EARLYBIRD_TIMEOUT_MS; a closed communicator; a malformed
  // EARLYBIRD_PROFILE). Not collective: peers need not call it, their
  // progress threads answer. What is warmed when:
  //   warm_up()                     round trips to those peers, and the
  //                                 choices;
  //   creation (world, adopt,       the same round trips, started on the
  //     split) of a communicator    progress thread, creation does not wait
  //     on the point-to-point       for them (a failure there fails the
  //     transport (spanning nodes,  communicator's later collectives, naming
  //     or EARLYBIRD_TRANSPORT=p2p)  the cause); then one allreduce of a
  //                                 double, which creation runs and waits
  //                                 for (creation is collective), so the
  //                                 first call of yours is not the first
  //                                 pass of the communicator's own objects;
  //                                 creation throws its error
  //   edge()                        one message without an answer to those
  //                                 peers and to every rank the last
  //                                 arrival-ordered collective wrote to.
  // Communicators on RMA (one node) are not warmed at creation.
  Future warm_up();

  // --- a measured choice. Collective: every rank calls it with the same
  // arguments, and no other call of this communicator is made meanwhile.
  // Times the candidates for a call like this one (`count` elements per
  // rank, per block for allgather and reduce_scatter; root 0 where rooted)
  // on this communicator — the model's fastest few, or options.algorithms —
  // one call each after a synchronising 4-byte allreduce, in a shuffled
  // order every round, for about options.budget; takes each candidate's
  // median over rounds of the slowest rank's time (every rank then has the
  // same figures and the same winner) and pins the fastest: from then on a
  // call of this communicator that leaves the choice to `auto` and falls in
  // the same size class (the class `auto` decides by: same collective,
  // operator commutativity, shared_buffers and power-of-two bound) runs it.
  // Calls naming an algorithm, persistent collectives made before, and
  // other communicators are unaffected; tuning a class again replaces its
  // pin. With one rank or count 0 it measures nothing and pins nothing.
  // Throws earlybird::Error naming tune, the rank and the cause (an unknown
  // or unsuitable algorithm, a failed trial call).
  TuneReport tune(coll::Collective collective, std::size_t count, Datatype type, ReduceOp op = Op::sum,
                  const TuneOptions& options = {});
  // The reports of every tune that pinned a class on this communicator, in
  // order: explicit ones and those EARLYBIRD_TUNE ran before the first
  // `auto` call of a class (docs/design.md, "Tuning").
  std::vector<TuneReport> tune_reports() const;

  // A new communicator over the ranks that pass the same `color`, ordered by
  // `key` (MPI_Comm_split semantics). Collective over this communicator.
  Communicator split(int color, int key) const;

 private:
  // The core, or an earlybird::Error naming `what` on an invalid communicator.
  detail::CommCore& checked_core(const char* what) const;
  [[noreturn]] void length_mismatch(const char* what, std::size_t expected, std::size_t got) const;
  std::shared_ptr<detail::CommCore> core_;
};

}  // namespace earlybird
