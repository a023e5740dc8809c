#include "comm_core.hpp"

#include <earlybird/communicator.hpp>

namespace earlybird {

Communicator::Communicator(std::shared_ptr<detail::CommCore> core) : core_(std::move(core)) {}

int Communicator::rank() const { return core_->rank(); }
int Communicator::size() const { return core_->size(); }

Future Communicator::allreduce(const void* in, void* out, std::size_t count, Datatype type, Op op,
                               const AllreduceOptions& options) {
  if (!core_) return Future(detail::failed_future("earlybird allreduce: invalid (default-constructed) communicator"));
  return core_->allreduce(in, out, count, type, op, options);
}

Communicator Communicator::split(int color, int key) const {
  auto core = core_->split(color, key);
  if (!core) return Communicator();
  return Communicator(detail::user_handle(std::move(core)));
}

void Communicator::length_mismatch(std::size_t in, std::size_t out) const {
  throw Error("earlybird allreduce on rank " + std::to_string(rank()) + ": input has " + std::to_string(in) +
              " elements but output has " + std::to_string(out));
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
