#include "library.hpp"


#include <algorithm>
#include <cstdio>
#include <string>

namespace earlybird::pmpi {

struct Library::CommState {
  Communicator communicator;
};

thread_local Library::LastLookup Library::last_lookup_;

Library& Library::instance() {
  static Library library;
  return library;
}

void Library::start(int required, int provided) {
  reported_level_ = std::min(required, provided);
  config_ = config::pmpi_config_from_environment();
  if (config_.disabled) return;
  for (coll::Collective collective : coll::kCollectives)
    for (bool blocking : {false, true}) {
      CollectiveOptions& options = options_[blocking ? 1 : 0][static_cast<std::size_t>(collective)];
      options.algorithm = config_.algorithm_for(collective);
      options.segment_bytes = config_.segment_bytes;
      options.blocking = blocking;
      options.shared_buffers = config_.shared_buffers;
    }
  if (provided < MPI_THREAD_MULTIPLE) {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
      std::fprintf(stderr, "earlybird: MPI_Init: the MPI library gives no MPI_THREAD_MULTIPLE, which earlybird's "
                           "progress thread needs; every collective passes through to MPI\n");
    return;
  }
  runtime_ = std::make_unique<Runtime>();
  PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &Library::delete_state, &keyval_, nullptr);
}

void Library::stop() {
  if (!runtime_) return;
  std::vector<Entry> entries;
  {
    std::lock_guard lock(mutex_);
    entries = entries_;
  }
  // Each deletion runs delete_state, which closes that communicator's window:
  // collective, in creation order on every rank.
  for (const Entry& entry : entries) PMPI_Comm_delete_attr(entry.comm, keyval_);
  PMPI_Comm_free_keyval(&keyval_);
  runtime_.reset();
}

Communicator* Library::last_communicator(MPI_Comm comm) const {
  const LastLookup& last = last_lookup_;
  if (last.comm != comm || last.released != released_.load(std::memory_order_acquire)) return nullptr;
  return last.communicator;
}

Communicator& Library::communicator_for(MPI_Comm comm) {
  // Read before the lookup: a release after it makes the remembered one stale.
  const std::uint64_t released = released_.load(std::memory_order_acquire);
  Communicator& communicator = looked_up(comm);
  last_lookup_ = {comm, &communicator, released};
  return communicator;
}

Communicator& Library::looked_up(MPI_Comm comm) {
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, keyval_, &value, &found);
  if (found) return static_cast<CommState*>(value)->communicator;
  std::lock_guard lock(mutex_);
  auto state = std::make_unique<CommState>();
  state->communicator = comm == MPI_COMM_WORLD ? runtime_->world() : runtime_->adopt(comm);
  PMPI_Comm_set_attr(comm, keyval_, state.get());
  entries_.push_back({comm, state.get()});
  return state.release()->communicator;
}

// MPI_Comm_free (or stop()) on a communicator earlybird ran on: dropping the
// last handle closes its window, collectively, as MPI_Comm_free is.
int Library::delete_state(MPI_Comm, int, void* value, void*) {
  auto* state = static_cast<CommState*>(value);
  instance().forget(state);
  delete state;
  return MPI_SUCCESS;
}

void Library::forget(CommState* state) {
  released_.fetch_add(1, std::memory_order_acq_rel);
  std::lock_guard lock(mutex_);
  std::erase_if(entries_, [state](const Entry& entry) { return entry.state == state; });
}

}  // namespace earlybird::pmpi
