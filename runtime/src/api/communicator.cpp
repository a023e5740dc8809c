#include "comm_core.hpp"

#include <earlybird/communicator.hpp>

namespace earlybird {

using coll::Collective;
using detail::CollectiveCall;

namespace {

Future run(const std::shared_ptr<detail::CommCore>& core, const CollectiveCall& call) {
  if (!core)
    return Future(detail::failed_future(std::string("earlybird ") + coll::to_string(call.collective) +
                                        ": invalid (default-constructed) communicator"));
  if (std::string problem = detail::tune_on_first_use(core, call); !problem.empty())
    return Future(detail::failed_future(problem));
  return core->run(call);
}

}  // namespace

Communicator::Communicator(std::shared_ptr<detail::CommCore> core) : core_(std::move(core)) {}

detail::CommCore& Communicator::checked_core(const char* what) const {
  if (!core_) throw Error(std::string("earlybird ") + what + ": invalid (default-constructed) communicator");
  return *core_;
}

int Communicator::rank() const { return checked_core("rank").rank(); }
int Communicator::size() const { return checked_core("size").size(); }

namespace {

CollectiveCall allreduce_call(const void* in, void* out, std::size_t count, Datatype type, ReduceOp op,
                              const CollectiveOptions& options) {
  return {Collective::allreduce, in, out, count, type, std::move(op), 0, options, nullptr};
}

// Only the root's output exists; other ranks' `out` is ignored.
CollectiveCall reduce_call(const detail::CommCore* core, const void* in, void* out, std::size_t count, Datatype type,
                           ReduceOp op, int root, const CollectiveOptions& options) {
  void* output = core && core->rank() == root ? out : nullptr;
  return {Collective::reduce, in, output, count, type, std::move(op), root, options, nullptr};
}

// The root's buffer is both source and (in place) destination.
CollectiveCall bcast_call(const detail::CommCore* core, void* buffer, std::size_t count, Datatype type, int root,
                          const CollectiveOptions& options) {
  const void* input = core && core->rank() == root ? buffer : nullptr;
  return {Collective::bcast, input, buffer, count, type, Op::sum, root, options, nullptr};
}

}  // namespace

Future Communicator::allreduce(const void* in, void* out, std::size_t count, Datatype type, ReduceOp op,
                               const CollectiveOptions& options) {
  return run(core_, allreduce_call(in, out, count, type, std::move(op), options));
}

Future Communicator::reduce(const void* in, void* out, std::size_t count, Datatype type, ReduceOp op, int root,
                            const CollectiveOptions& options) {
  return run(core_, reduce_call(core_.get(), in, out, count, type, std::move(op), root, options));
}

Future Communicator::bcast(void* buffer, std::size_t count, Datatype type, int root, const CollectiveOptions& options) {
  return run(core_, bcast_call(core_.get(), buffer, count, type, root, options));
}

PartitionedCollective Communicator::allreduce_partitioned(const void* in, void* out,
                                                         std::vector<std::size_t> part_counts, std::size_t count,
                                                         Datatype type, ReduceOp op,
                                                         const CollectiveOptions& options) {
  CollectiveOptions for_parts = options;
  for_parts.blocking = false;  // ready() must return while its part runs
  return detail::make_partitioned(core_, allreduce_call(in, out, count, type, std::move(op), for_parts),
                                  std::move(part_counts));
}

std::vector<std::size_t> Communicator::equal_parts(std::size_t count, std::size_t parts) {
  std::vector<std::size_t> counts;
  for (std::size_t k = 0; k < parts; ++k) counts.push_back(count / parts + (k < count % parts ? 1 : 0));
  return counts;
}

PersistentCollective Communicator::allreduce_init(const void* in, void* out, std::size_t count, Datatype type,
                                                  ReduceOp op, const CollectiveOptions& options) {
  return detail::make_persistent(core_, allreduce_call(in, out, count, type, std::move(op), options));
}

PersistentCollective Communicator::reduce_init(const void* in, void* out, std::size_t count, Datatype type,
                                               ReduceOp op, int root, const CollectiveOptions& options) {
  return detail::make_persistent(core_, reduce_call(core_.get(), in, out, count, type, std::move(op), root, options));
}

PersistentCollective Communicator::bcast_init(void* buffer, std::size_t count, Datatype type, int root,
                                              const CollectiveOptions& options) {
  return detail::make_persistent(core_, bcast_call(core_.get(), buffer, count, type, root, options));
}

Future Communicator::allgather(const void* in, void* out, std::size_t count, Datatype type,
                               const CollectiveOptions& options) {
  return run(core_, {Collective::allgather, in, out, count, type, Op::sum, 0, options, nullptr});
}

Future Communicator::reduce_scatter(const void* in, void* out, std::size_t count, Datatype type, ReduceOp op,
                                    const CollectiveOptions& options) {
  return run(core_, {Collective::reduce_scatter, in, out, count, type, std::move(op), 0, options, nullptr});
}

// The input is this rank's block of `inout`, read in place: every
// allgather schedule is verified for it (coll::input_in_output), and the
// inline and peer_reads executors write that block only with its own bytes.
Future Communicator::allgather_in_place(void* inout, std::size_t count, Datatype type, const CollectiveOptions& options) {
  if (!core_) return run(core_, {Collective::allgather, nullptr, inout, count, type, Op::sum, 0, options, nullptr});
  const std::size_t block = count * size_of(type);
  const auto* input = static_cast<const std::byte*>(inout) + static_cast<std::size_t>(rank()) * block;
  return run(core_, {Collective::allgather, input, inout, count, type, Op::sum, 0, options, nullptr});
}

Future Communicator::reduce_scatter_in_place(void* inout, std::size_t count, Datatype type, ReduceOp op,
                                             const CollectiveOptions& options) {
  if (!core_) return run(core_, {Collective::reduce_scatter, nullptr, inout, count, type, std::move(op), 0, options, nullptr});
  // Read in place, or from a copy where the executor needs one (CommCore::launch).
  return run(core_, {Collective::reduce_scatter, inout, inout, count, type, std::move(op), 0, options, nullptr});
}

Future Communicator::warm_up() {
  if (!core_) return Future(detail::failed_future("earlybird warm_up: invalid (default-constructed) communicator"));
  return core_->warm_up();
}

void Communicator::phase_begin() { checked_core("phase_begin").arrival().phase_begin(); }
void Communicator::edge(double fraction) { checked_core("edge").edge(fraction); }
void Communicator::phase_end() { checked_core("phase_end").arrival().phase_end(); }
std::optional<StragglerReport> Communicator::straggler_report() const {
  return checked_core("straggler_report").arrival().straggler_report();
}
std::optional<ArrivalDecision> Communicator::last_decision() const {
  return checked_core("last_decision").arrival().last_decision();
}

Communicator Communicator::split(int color, int key) const {
  auto core = checked_core("split").split(color, key);
  if (!core) return Communicator();
  return Communicator(detail::user_handle(std::move(core)));
}

void Communicator::length_mismatch(const char* what, std::size_t expected, std::size_t got) const {
  throw Error(std::string("earlybird ") + what + " on rank " + std::to_string(rank()) + ": expected " +
              std::to_string(expected) + " elements, got " + std::to_string(got));
}

namespace detail {

std::shared_ptr<CommCore> user_handle(std::shared_ptr<CommCore> core) {
  // The handle users copy: when the last copy goes, the communicator closes
  // (collective, like MPI_Comm_free), then the core is released.
  CommCore* raw = core.get();
  return std::shared_ptr<CommCore>(raw, [owner = std::move(core)](CommCore*) mutable {
    owner->close();
    owner.reset();
  });
}

}  // namespace detail
}  // namespace earlybird
