#include "comm_core.hpp"

#include "../rma/mpi_comm.hpp"
#include "../rma/transport_choice.hpp"
#include "../topo/topology.hpp"
#include "../config/algorithm_choice.hpp"

#include <earlybird/machine_probe.hpp>

#include <earlybird/runtime.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace earlybird {
namespace {

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
  }
  return "an unknown thread level";
}

std::string kernel_boot_id() {
  std::string id;
  if (std::FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
    char text[64] = {0};
    if (std::fgets(text, sizeof text, f)) id = text;
    std::fclose(f);
  }
  return id;
}

}  // namespace

int ranks_on_this_machine(MPI_Comm comm, int fallback) {
  const std::string boot_id = kernel_boot_id();
  int missing = boot_id.empty() ? 1 : 0;
  PMPI_Allreduce(MPI_IN_PLACE, &missing, 1, MPI_INT, MPI_MAX, comm);
  if (missing) return fallback;
  const unsigned long long mine = std::hash<std::string>{}(boot_id);
  int size = 1;
  PMPI_Comm_size(comm, &size);
  std::vector<unsigned long long> all(static_cast<std::size_t>(size));
  PMPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG, comm);
  return static_cast<int>(std::count(all.begin(), all.end(), mine));
}

namespace {

// This rank's place among the ranks sharing its node.
struct NodePlace {
  int rank = 0;
  int size = 1;
};

NodePlace node_place() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  NodePlace place;
  MPI_Comm_rank(node, &place.rank);
  MPI_Comm_size(node, &place.size);
  MPI_Comm_free(&node);
  return place;
}

// The start-up probe, unless a profile file is named or EARLYBIRD_PROBE=0:
// every rank probes or none does (a rank that has a profile file keeps it).
void probe_unless_profiled(bool verbose) {
  int wanted = !config::profile_named_by_environment() && config::probe_allowed_by_environment() ? 1 : 0;
  PMPI_Allreduce(MPI_IN_PLACE, &wanted, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!wanted) return;
  const double start = MPI_Wtime();
  const std::optional<coll::MachineProfile> probed = probe_machine(MPI_COMM_WORLD, coll::default_profile());
  const double took_ms = (MPI_Wtime() - start) * 1e3;
  if (!probed) return;  // one node: nothing measured
  const bool used = config::use_probed_profile(*probed);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (verbose && rank == 0)
    std::fprintf(stderr, "earlybird: start-up probe, %.1f ms%s:\n%s", took_ms,
                 used ? "" : " (not used: the process's profile was decided before)",
                 coll::format_profile(*probed).c_str());
}

}  // namespace

struct Runtime::Impl {
  bool owns_mpi = false;
  int local_ranks = 1;
  int machine_ranks = 1;
  int workers = 1;
  config::CommOptions comm_options;
  std::unique_ptr<ProgressEngine> engine;  // outlives every CommCore
  std::vector<std::weak_ptr<detail::CommCore>> cores;  // to close before MPI_Finalize
  Communicator world;

  Communicator make(MPI_Comm comm) {
    int ranks = 0;
    MPI_Comm_size(comm, &ranks);
    auto chosen = make_mpi_transport(comm, detail::layout_for(comm_options, ranks).window_size(), comm_options);
    auto core = detail::CommCore::create(*engine, std::move(chosen.transport), comm_options);
    cores.push_back(core);
    return Communicator(detail::user_handle(std::move(core)));
  }
};

Runtime::Runtime(RuntimeOptions options) : Runtime(nullptr, nullptr, options) {}

Runtime::Runtime(int* argc, char*** argv, RuntimeOptions options) : impl_(std::make_unique<Impl>()) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = MPI_THREAD_SINGLE;
  if (!initialized) {
    config::prepare_mpi_environment();
    check_mpi(PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
    impl_->owns_mpi = true;
  } else {
    PMPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    const std::string message = std::string("earlybird needs MPI_THREAD_MULTIPLE (its progress thread calls MPI "
                                            "while your threads may), but the MPI library provides ") +
                                thread_level_name(provided) +
                                (initialized ? "; initialise MPI with MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...)"
                                             : "; this MPI build lacks thread support");
    if (impl_->owns_mpi) PMPI_Finalize();
    throw Error(message);
  }
  impl_->comm_options = config::comm_options_from_environment();
  if (options.scratch_bytes) impl_->comm_options.scratch_bytes = options.scratch_bytes;
  if (options.timeout.count() > 0) impl_->comm_options.timeout = options.timeout;
  probe_unless_profiled(impl_->comm_options.verbose);
  const NodePlace place = node_place();
  impl_->local_ranks = place.size;
  impl_->machine_ranks = std::max(place.size, ranks_on_this_machine(MPI_COMM_WORLD, place.size));
  impl_->workers = options.worker_threads > 0 ? options.worker_threads : topo::thread_budget(impl_->machine_ranks);
  topo::note_machine_ranks(impl_->machine_ranks);
  const bool bind = config::binding_requested(options.bind_progress_thread) && !topo::oversubscribed();
  const int cpu = bind ? topo::progress_thread_cpu(place.rank, impl_->machine_ranks) : -1;
  impl_->engine = std::make_unique<ProgressEngine>(EngineOptions{impl_->workers, cpu, config::injected_stall_from_environment()});
  impl_->world = impl_->make(MPI_COMM_WORLD);
}

Runtime::~Runtime() {
  impl_->world = Communicator();
  for (auto it = impl_->cores.rbegin(); it != impl_->cores.rend(); ++it)
    if (auto core = it->lock()) core->close();
  impl_->engine.reset();
  if (impl_->owns_mpi) PMPI_Finalize();
}

Communicator Runtime::world() { return impl_->world; }
Communicator Runtime::adopt(MPI_Comm comm) { return impl_->make(comm); }
int Runtime::local_ranks() const { return impl_->local_ranks; }
int Runtime::machine_ranks() const { return impl_->machine_ranks; }
int Runtime::worker_threads() const { return impl_->workers; }
const coll::MachineProfile& Runtime::cost_profile() const { return config::machine_profile(); }

}  // namespace earlybird
