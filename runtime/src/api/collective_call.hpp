// CollectiveCall: one call of a collective as the user made it, and what the
// runtime derives from it before planning: validation with a clear reason, the
// algorithm (named or chosen), the text errors start with, and the signature
// flags carry so that ranks calling different collectives are caught.
#pragma once

#include "../config/algorithm_choice.hpp"

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/types.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace earlybird::detail {

struct CollectiveCall {
  CollectiveCall() = default;
  // A constructor, not aggregate initialization, which GCC compiles to
  // zero-filling the whole record before filling it in (about 5 % of an
  // 8-byte allreduce's time at P = 2, by perf samples).
  CollectiveCall(coll::Collective collective, const void* input, void* output, std::size_t count, Datatype type,
                 ReduceOp op, int root, const CollectiveOptions& options,
                 std::shared_ptr<const std::vector<std::byte>> owned_input)
      : collective(collective),
        input(input),
        output(output),
        count(count),
        type(type),
        op(std::move(op)),
        root(root),
        options(options),
        owned_input(std::move(owned_input)) {}

  coll::Collective collective = coll::Collective::allreduce;
  const void* input = nullptr;  // may equal output (in place)
  void* output = nullptr;
  std::size_t count = 0;  // elements per rank (per block for allgather, reduce_scatter)
  Datatype type = Datatype::int32;
  ReduceOp op = Op::sum;
  int root = 0;
  CollectiveOptions options;
  // The private copy an in-place call reads its input from where its
  // executor cannot read it in place (CommCore::reads_input_copy); it lives
  // as long as the operations.
  std::shared_ptr<const std::vector<std::byte>> owned_input;

  bool reduces() const { return coll::reduces(collective); }
};

// The algorithm this call runs and its segment: options.algorithm, or the
// default for its collective, size and operator, whether every rank's
// window is directly reachable and the ranks per node when the ranks span
// nodes (config/algorithm_choice.hpp); "" if none fits. The segment:
// options.segment_bytes where given, else the model's where it chose the
// algorithm, else 0 (the algorithm's default). `log`: print the model's
// choice and runners-up on stderr the first time it decides one.
// `shared_cores`, `reads_peers`: config::default_algorithm's (its `peers_mapped`:
// call.options.shared_buffers).
// auto_pap runs auto's choice instead where the model says the arrival
// board cannot pay for itself (config::arrival_stand_in).
// Throws earlybird::Error when EARLYBIRD_PROFILE is malformed.
// The call names no algorithm, or `auto`.
inline bool leaves_choice_to_auto(const CollectiveCall& call) {
  return call.options.algorithm.empty() || call.options.algorithm == "auto";
}
config::Choice choose_algorithm(const CollectiveCall& call, int ranks, bool direct, int node_ranks, bool log = false,
                                int shared_cores = 0, bool reads_peers = false);
// "earlybird allreduce(algorithm=ring, count=..., ...) on rank r of P"
std::string describe(const CollectiveCall& call, const std::string& algorithm, int rank, int ranks);
// What makes a call invalid whatever its buffers (root, algorithm, operator
// for the type): empty when none; otherwise the reason.
std::string shape_problem(const CollectiveCall& call, const std::string& algorithm, int ranks);
// What is wrong with the call's buffers on this rank (null where data is
// needed, partial overlap); nullptr when nothing.
const char* buffer_problem(const CollectiveCall& call, int rank, int ranks);
// Same collective, count, type, root, operator and options: everything but
// the buffers, so the same validity, algorithm, signature and plans.
bool same_shape(const CollectiveCall& a, const CollectiveCall& b);
// A hash of everything all ranks must agree on.
std::uint64_t signature_of(const CollectiveCall& call, const std::string& algorithm);

}  // namespace earlybird::detail
