#include "hybrid_transport.hpp"

#include "transport_choice.hpp"

#include <earlybird/error.hpp>

#include <string>

namespace earlybird {
namespace {

// The ranks sharing this rank's segment, in comm's order.
MPI_Comm segment_part(MPI_Comm comm, int segment_color) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (segment_color != HybridTransport::kNodeSegments) return split_comm(comm, segment_color, rank);
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type (hybrid transport)");
  return node;
}

// The segment over `node`, or the reason it could not be made here.
std::unique_ptr<MpiTransport> node_segment(MPI_Comm node, WindowSize window, std::string& failure) {
  try {
    auto segment = std::make_unique<MpiTransport>(node, window, true);
    if (segment->direct_window(0)) return segment;
    failure = "this node's window is not shared memory";
  } catch (const std::exception& e) {
    failure = e.what();
  }
  return nullptr;
}

}  // namespace

HybridTransport::HybridTransport(MPI_Comm comm, WindowSize window, const config::CommOptions& options,
                                 int segment_color)
    : options_(options) {
  MPI_Comm node = segment_part(comm, segment_color);
  std::string failure;
  node_ = node_segment(node, window, failure);
  int size = 0, node_size = 0, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(node, &node_size);
  std::vector<int> node_members(static_cast<std::size_t>(node_size));
  // Every rank of a node makes the same calls whether its segment worked or
  // not, and every rank learns whether all did.
  const int gathered = PMPI_Allgather(&rank, 1, MPI_INT, node_members.data(), 1, MPI_INT, node);
  int failed = gathered == MPI_SUCCESS && node_ ? 0 : 1;
  MPI_Comm_free(&node);
  check_mpi(PMPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce (hybrid transport set-up)");
  if (failed)
    throw Error("earlybird hybrid transport: a node's shared segment could not be made (" +
                (failure.empty() ? std::string("on another node") : failure) + ")");
  node_rank_.assign(static_cast<std::size_t>(size), -1);
  for (int i = 0; i < node_size; ++i) node_rank_[static_cast<std::size_t>(node_members[static_cast<std::size_t>(i)])] = i;
  network_ = std::make_unique<P2pTransport>(comm, window, options.timeout, node_->window());
}

std::byte* HybridTransport::direct_window(int rank) {
  const int local = node_rank_[static_cast<std::size_t>(rank)];
  return local < 0 ? nullptr : node_->direct_window(local);
}

HybridTransport::Route HybridTransport::route(int target) {
  const int local = node_rank_[static_cast<std::size_t>(target)];
  return local >= 0 ? Route{*node_, local} : Route{*network_, target};
}

void HybridTransport::put(int target, std::size_t offset, const void* src, std::size_t bytes) {
  auto [via, rank] = route(target);
  via.put(rank, offset, src, bytes);
}

void HybridTransport::get(int target, std::size_t offset, void* dst, std::size_t bytes) {
  auto [via, rank] = route(target);
  via.get(rank, offset, dst, bytes);
}

void HybridTransport::notify(int target, std::size_t offset, std::uint64_t value) {
  auto [via, rank] = route(target);
  via.notify(rank, offset, value);
}

void HybridTransport::put_notify(int target, std::size_t offset, const void* src, std::size_t bytes,
                                 std::size_t flag_offset, std::uint64_t value) {
  auto [via, rank] = route(target);
  via.put_notify(rank, offset, src, bytes, flag_offset, value);
}

std::uint64_t HybridTransport::load_remote(int target, std::size_t offset) {
  auto [via, rank] = route(target);
  return via.load_remote(rank, offset);
}

std::uint64_t HybridTransport::fetch_add(int target, std::size_t offset, std::uint64_t value) {
  auto [via, rank] = route(target);
  return via.fetch_add(rank, offset, value);
}

void HybridTransport::load_remote_words(int target, std::size_t offset, std::uint64_t* out, std::size_t count) {
  auto [via, rank] = route(target);
  via.load_remote_words(rank, offset, out, count);
}

void HybridTransport::post_remote_words(int target, std::size_t offset, const std::uint64_t* words,
                                        std::size_t count) {
  auto [via, rank] = route(target);
  via.post_remote_words(rank, offset, words, count);
}

std::unique_ptr<Transport> HybridTransport::split(int color, int key, WindowSize window) {
  MPI_Comm part = split_comm(network_->communicator(), color, key);
  if (part == MPI_COMM_NULL) return nullptr;
  ChosenTransport chosen;
  try {
    chosen = make_mpi_transport(part, window, options_);
  } catch (...) {
    MPI_Comm_free(&part);
    throw;
  }
  MPI_Comm_free(&part);
  return std::move(chosen.transport);
}

void HybridTransport::close() {
  try {
    if (network_) network_->close();
  } catch (...) {
    if (node_) node_->close();
    throw;
  }
  if (node_) node_->close();
}

}  // namespace earlybird
