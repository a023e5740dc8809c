#include "collective_call.hpp"

#include <cstdio>
#include <optional>

namespace earlybird::detail {
namespace {

using coll::Collective;

bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto* x = static_cast<const std::byte*>(a);
  const auto* y = static_cast<const std::byte*>(b);
  return a_bytes && b_bytes && x < y + b_bytes && y < x + a_bytes;
}

}  // namespace

config::Choice choose_algorithm(const CollectiveCall& call, int ranks, bool direct, int node_ranks, bool log,
                                int shared_cores, bool reads_peers) {
  const std::string& named = call.options.algorithm;
  const coll::Algorithm* entry = named.empty() ? nullptr : coll::find_algorithm(call.collective, named);
  const bool commutative = !call.reduces() || call.op.commutative();
  // auto_pap; with an operator it cannot take it is refused as named (shape_problem).
  const bool arrival_chosen =
      entry && entry->arrival == coll::ArrivalOrder::chosen && (commutative || !entry->needs_commutative);
  if (!named.empty() && named != "auto" && !arrival_chosen) return {named, call.options.segment_bytes};
  const std::size_t bytes = call.count * size_of(call.type);
  std::string explanation;
  std::optional<config::Choice> chosen;
  if (arrival_chosen)
    chosen = config::arrival_stand_in(*entry, call.collective, bytes, ranks, commutative, direct, node_ranks,
                                      &explanation, shared_cores, reads_peers, call.options.shared_buffers);
  else
    chosen = config::default_algorithm(call.collective, bytes, ranks, commutative, direct, node_ranks, &explanation,
                                       shared_cores, reads_peers, call.options.shared_buffers);
  if (!chosen) return {named, call.options.segment_bytes};  // auto_pap where the arrival board may pay
  if (log && !explanation.empty()) std::fputs(explanation.c_str(), stderr);
  if (call.options.segment_bytes) chosen->segment_bytes = call.options.segment_bytes;
  return *chosen;
}

std::string describe(const CollectiveCall& call, const std::string& algorithm, int rank, int ranks) {
  std::string text = std::string("earlybird ") + coll::to_string(call.collective) + "(algorithm=" +
                     (algorithm.empty() ? "?" : algorithm) + ", count=" + std::to_string(call.count) +
                     ", type=" + to_string(call.type);
  if (call.reduces()) text += ", op=" + call.op.name();
  if (call.collective == Collective::reduce || call.collective == Collective::bcast)
    text += ", root=" + std::to_string(call.root);
  return text + ") on rank " + std::to_string(rank) + " of " + std::to_string(ranks);
}

std::string shape_problem(const CollectiveCall& call, const std::string& algorithm, int ranks) {
  if (call.root < 0 || call.root >= ranks) return "root " + std::to_string(call.root) + " is not a rank";
  const coll::Algorithm* info = coll::find_algorithm(call.collective, algorithm);
  if (!info)
    return algorithm.empty() ? "no algorithm suits this call"
                             : "unknown algorithm; known: " + coll::algorithm_names(call.collective);
  if (call.reduces()) {
    if (!call.op.supports(call.type))
      return "operator " + call.op.name() + " is not defined for " + to_string(call.type) +
             (call.op.is_user() ? std::string(" (it was written for ") + to_string(call.op.user_type()) + ")" : "");
    if (!call.op.commutative() && info->needs_commutative)
      return "algorithm " + algorithm + " needs a commutative operator and " + call.op.name() + " is not";
  }
  return "";
}

const char* buffer_problem(const CollectiveCall& call, int rank, int ranks) {
  const coll::Shape shape = coll::shape_of(call.collective, ranks, call.count);
  const std::size_t elem = size_of(call.type);
  const bool root = rank == call.root;
  const bool needs_input = call.collective != Collective::bcast || root;
  const bool needs_output = call.collective != Collective::reduce || root;
  if (needs_input && shape.input && !call.input) return "null input buffer";
  if (needs_output && shape.output && !call.output) return "null output buffer";
  if (!needs_input || !needs_output) return nullptr;
  // In place, the input lies where coll::input_in_output says (the schedules
  // are verified for that); any other overlap is an error.
  const auto* in_place_input = static_cast<const std::byte*>(call.output) +
                               coll::input_in_output(call.collective, rank, shape.input) * elem;
  if (call.input != in_place_input && overlap(call.input, shape.input * elem, call.output, shape.output * elem))
    return "input and output overlap without being the same buffer";
  return nullptr;
}

bool same_shape(const CollectiveCall& a, const CollectiveCall& b) {
  const bool same_op = a.op.is_user() == b.op.is_user() &&
                       (a.op.is_user() ? a.op.commutative() == b.op.commutative() &&
                                             a.op.user_type() == b.op.user_type() && a.op.name() == b.op.name()
                                       : a.op.builtin() == b.op.builtin());
  const CollectiveOptions& x = a.options;
  const CollectiveOptions& y = b.options;
  return a.collective == b.collective && a.count == b.count && a.type == b.type && a.root == b.root && same_op &&
         x.algorithm == y.algorithm && x.segment_bytes == y.segment_bytes && x.fanout == y.fanout &&
         x.timeout == y.timeout && x.straggler_after == y.straggler_after && x.blocking == y.blocking &&
         x.shared_buffers == y.shared_buffers;
}

std::uint64_t signature_of(const CollectiveCall& call, const std::string& algorithm) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  auto mix = [&](std::uint64_t v) {
    for (int i = 0; i < 8; ++i, v >>= 8) h = (h ^ (v & 0xff)) * 1099511628211ull;
  };
  for (char c : algorithm) mix(static_cast<unsigned char>(c));
  for (char c : call.op.name()) mix(static_cast<unsigned char>(c));
  mix(static_cast<std::uint64_t>(call.collective));
  mix(call.count);
  mix(static_cast<std::uint64_t>(call.type));
  mix(static_cast<std::uint64_t>(call.root));
  mix(call.options.segment_bytes);
  mix(static_cast<std::uint64_t>(call.options.fanout));
  return h ^ (h >> 24) ^ (h >> 48);
}

}  // namespace earlybird::detail
