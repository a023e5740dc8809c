// Hybrid transport: for a communicator spanning nodes, loads and stores to
// the ranks of this node and point-to-point messages to the others.
//
// Each node's ranks allocate one shared segment (MPI_Win_allocate_shared
// over the node's ranks: an MpiTransport in its direct mode), and each rank's
// part of it is that rank's window for the whole communicator. A peer on this
// node is reached the way a one-node communicator reaches it (memcpy into its
// part, release store of a flag, atomics for fetch-add and remote words); a
// peer on another node through a P2pTransport over the whole communicator
// whose window is the same memory, its progress applying requests with
// atomic_ref on the words, so the two kinds of access to one word (a counter
// of the arrival board that ranks of both kinds add to) stay atomic.
//
// Why: on the point-to-point transport alone, a put to a rank of the same
// node is a message its target's progress thread must take and apply; here it
// is complete when the memcpy returns, and every schedule (the hierarchical
// allreduce's node phases among them) crosses a node through memory.
//
// Order and completion per target are those of the path it takes (both:
// a notify is ordered after this rank's earlier puts to that target). Across
// targets of different paths nothing is promised (as before: put returns when
// the source may be reused, not when a remote target has the data).
//
//   target            put / notify / put_notify   get, remote words, fetch-add
//   this rank         memcpy / release store      atomics on the own part
//   same node         memcpy / release store      atomics on the peer's part
//   other node        P2pTransport message        P2pTransport round trip
//
// Cost: a node peer's operation costs what it costs on a one-node shared
// window; another node's what it costs on P2pTransport. Limitations: needs
// MPI_Win_allocate_shared on every node (Open MPI's osc/sm: the testbed
// passes `--mca osc ucx,sm`); the communicator is not `direct` (not every
// window is reachable), so the one-node paths (inline lines, peer reads)
// are not used; user buffers of node peers are not read directly.
#pragma once

#include "../config/environment.hpp"
#include "mpi_transport.hpp"
#include "p2p_transport.hpp"
#include "transport.hpp"

#include <mpi.h>

#include <memory>
#include <vector>

namespace earlybird {

class HybridTransport final : public Transport {
 public:
  // The ranks that share a segment: this node's (MPI_COMM_TYPE_SHARED).
  static constexpr int kNodeSegments = -1;

  // Collective over `comm`. `segment_color`: kNodeSegments, or a color per
  // rank (MPI_Comm_split) grouping ranks that share memory, so that a test
  // on one node can split it into several "nodes". Throws earlybird::Error
  // on every rank when any group's shared segment could not be made.
  HybridTransport(MPI_Comm comm, WindowSize window, const config::CommOptions& options,
                  int segment_color = kNodeSegments);

  int rank() const override { return network_->rank(); }
  int size() const override { return network_->size(); }
  int node_ranks() const override { return network_->node_ranks(); }
  std::byte* window() override { return node_->window(); }
  std::size_t window_bytes() const override { return node_->window_bytes(); }
  std::byte* direct_window(int rank) override;
  void put(int target, std::size_t offset, const void* src, std::size_t bytes) override;
  void get(int target, std::size_t offset, void* dst, std::size_t bytes) override;
  void notify(int target, std::size_t offset, std::uint64_t value) override;
  void put_notify(int target, std::size_t offset, const void* src, std::size_t bytes, std::size_t flag_offset,
                  std::uint64_t value) override;
  std::uint64_t load_flag(std::size_t offset) override { return node_->load_flag(offset); }
  std::uint64_t load_remote(int target, std::size_t offset) override;
  void store_local(std::size_t offset, std::uint64_t value) override { node_->store_local(offset, value); }
  std::uint64_t fetch_add(int target, std::size_t offset, std::uint64_t value) override;
  void load_remote_words(int target, std::size_t offset, std::uint64_t* out, std::size_t count) override;
  void post_remote_words(int target, std::size_t offset, const std::uint64_t* words, std::size_t count) override;
  std::int64_t clock_offset_ns() const override { return network_->clock_offset_ns(); }
  std::int64_t clock_origin_ns() const override { return network_->clock_origin_ns(); }
  bool poll_hook() override { return network_->poll_hook(); }
  bool needs_service() const override { return true; }
  // As the point-to-point transport: most waits of a communicator spanning
  // nodes are for another node's messages, so its poller may sleep between
  // polls (a node step's flag is then seen up to one such pause late).
  bool waits_for_messages() const override { return true; }
  bool sends_pending() override { return network_->sends_pending(); }
  // Chooses again for the part (make_mpi_transport with this communicator's
  // options): a part inside one node gets a shared window of its own.
  std::unique_ptr<Transport> split(int color, int key, WindowSize window) override;
  void fault_in(std::size_t offset, std::size_t bytes) override { node_->fault_in(offset, bytes); }
  // The messages first (every peer stops sending into the segment), then
  // the segment. Limitation: when a peer stalled past the wait limit while
  // its large put to this rank was being received (the point-to-point close
  // gives up, rma/p2p_transport.hpp), MPI may still write that put's data
  // into the freed segment; the point-to-point transport keeps its own
  // window then, but the segment is MPI's and its free is collective.
  void close() override;

 private:
  // Which transport reaches `target`, and by which of its ranks: the node
  // segment by the target's rank among this node's, else the messages.
  struct Route {
    Transport& via;
    int rank;
  };
  Route route(int target);

  config::CommOptions options_;
  std::unique_ptr<MpiTransport> node_;     // this node's ranks, direct: the segment
  std::unique_ptr<P2pTransport> network_;  // every rank, over this rank's part of the segment
  std::vector<int> node_rank_;             // per rank: its rank among this node's, or -1
};

}  // namespace earlybird
