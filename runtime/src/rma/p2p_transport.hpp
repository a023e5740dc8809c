// Point-to-point transport: the Transport interface over MPI_Isend/MPI_Irecv,
// for networks where MPI RMA is missing or slow (over TCP, Open MPI 4.1's
// osc/rdma cannot allocate a window and osc/ucx emulates RMA with messages the
// target only handles when its own thread enters the right UCX worker).
//
// Each rank keeps its window in ordinary memory. A one-sided operation becomes
// a request that the target's progress thread applies: the target keeps
// kPostedReceives receives posted for any source (so a request needs no action
// by the target's user thread), applies requests in the order they matched,
// and answers those that return something. A request carries up to
// kInlineBytes of data in the same message; a larger put sends its data as
// further messages (kDataPieceBytes each) that the target receives straight
// into its window.
//
// Order and completion (what the executor and the arrival board rely on):
//   put, notify: applied at the target in the order this rank issued them to
//     that target (MPI's non-overtaking rule plus in-order application); put
//     returns when the source memory may be reused, notify at once.
//   post_remote_words: one message, applied in that same order; returns at
//     once (no answer).
//   get, load_remote, load_remote_words, fetch_add: return after the target
//     answered, so they are complete at the target on return.
// Every wait serves the incoming requests of every open P2pTransport of the
// process, so two ranks waiting on each other cannot deadlock, even when
// their waits are on different communicators, and fails with
// earlybird::Error naming the peer after `wait_limit`. A peer that sent its
// close still answers until every peer closed; one that gave up waiting for
// that (after its wait limit) says so to the peers it did not hear from
// ("gone"), and waits on it then fail at once.
//
// Answers: each request that returns something names its answer's MPI tag,
// a new one per request to that target (cycling through the tags MPI_TAG_UB
// allows). An answer whose wait gave up (the receive cancelled) may still
// come: its tag is not reused until it came and was dropped, so it can never
// be taken for a later request's answer.
//
// Threads: each transport's state is guarded by its own recursive mutex,
// held by every operation and by whoever serves it. A communicator's
// operations come from its drive holder (the progress thread or a caller-run
// user thread); a wait serves the other transports it can lock at once and
// skips those another thread holds (that thread serves them). Between operations the communicator keeps polling
// the transport (needs_service), so a peer's put into this window never waits
// for this rank's next collective.
//
// Per source, at the target:
//   state       request arrives             data message arrives
//   ready       apply it (put with data:    -
//               post its receive → receiving)
//   receiving   copy it aside (deferred)    → ready; apply the deferred in order
//
// Requests to this rank itself (the arrival board lives in rank 0's window)
// are applied at once, without MPI.
//
// Cost: a put of m bytes is one message (m ≤ kInlineBytes, copied once on
// each side) or 1 + ceil(m / kDataPieceBytes) (header, then the data
// received in place); a put and the flag raised for it at the same target
// (put_notify) one message up to kInlineBytes; a read is a round trip.
// Limitation: one request in flight per caller (the progress thread), as
// with the RMA transport's flush after every operation.
#pragma once

#include "../base/backoff.hpp"
#include "mpi_comm.hpp"
#include "transport.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace earlybird {

class P2pTransport final : public Transport {
 public:
  // A put up to this size travels in its request's message. Larger ones
  // pay a second message, received where the request says, and across the
  // emulated hosts recursive doubling's 32 KiB allreduce took 360-480 us
  // that way, 180-350 in one message (8 KiB until 2026-11-28). Each posted
  // receive holds this much: 1 MiB per transport.
  static constexpr std::size_t kInlineBytes = 64 * 1024;
  static constexpr int kPostedReceives = 16;
  // A larger put's data travels as messages of at most this many bytes, one
  // in flight at a time (the target posts receives for all of them at once).
  // Across emulated hosts at 1 Gbit/s (UCX over TCP), two ranks putting
  // 2 MiB to each other as one message each, or as 16 pieces all in flight,
  // took 16 and 31 ms: one direction waited for the other. One piece in
  // flight at a time: 16-17 ms both (docs/benchmarks.md, "Across hosts").
  static constexpr std::size_t kDataPieceBytes = 128 * 1024;

  // Duplicates `comm` and allocates a window of `window.bytes` on each rank,
  // its first window.zeroed bytes zero. Collective. All ranks must ask for
  // the same size. Waits for a peer fail after `wait_limit`.
  P2pTransport(MPI_Comm comm, WindowSize window, std::chrono::milliseconds wait_limit);
  // The same over a window this rank already has (`memory`, window.bytes
  // long, its first window.zeroed bytes zero, outliving the transport): the
  // hybrid transport's node segment, which node peers also load and store.
  P2pTransport(MPI_Comm comm, WindowSize window, std::chrono::milliseconds wait_limit, std::byte* memory);
  ~P2pTransport() override;
  P2pTransport(const P2pTransport&) = delete;
  P2pTransport& operator=(const P2pTransport&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int node_ranks() const override { return node_ranks_; }
  // The transport's own duplicate of the communicator it was made over.
  MPI_Comm communicator() const { return comm_; }
  std::byte* window() override { return window_; }
  std::size_t window_bytes() const override { return window_bytes_; }
  void put(int target, std::size_t offset, const void* src, std::size_t bytes) override;
  void get(int target, std::size_t offset, void* dst, std::size_t bytes) override;
  void notify(int target, std::size_t offset, std::uint64_t value) override;
  // One message up to kInlineBytes (each message across hosts costs ~8 us
  // on the emulated testbed, docs/benchmarks.md); larger: put, then notify.
  void put_notify(int target, std::size_t offset, const void* src, std::size_t bytes, std::size_t flag_offset,
                  std::uint64_t value) override;
  std::uint64_t load_flag(std::size_t offset) override;
  std::uint64_t load_remote(int target, std::size_t offset) override;
  void store_local(std::size_t offset, std::uint64_t value) override;
  std::uint64_t fetch_add(int target, std::size_t offset, std::uint64_t value) override;
  void load_remote_words(int target, std::size_t offset, std::uint64_t* out, std::size_t count) override;
  void post_remote_words(int target, std::size_t offset, const std::uint64_t* words, std::size_t count) override;
  std::int64_t clock_offset_ns() const override { return clock_.offset_ns; }
  std::int64_t clock_origin_ns() const override { return clock_.origin_ns; }
  bool needs_service() const override { return true; }
  bool waits_for_messages() const override { return true; }
  bool sends_pending() override;
  bool poll_hook() override;
  std::unique_ptr<Transport> split(int color, int key, WindowSize window) override;
  void fault_in(std::size_t offset, std::size_t bytes) override;
  void close() override;

 private:
  enum class Kind : std::uint64_t {
    put, put_data, notify, put_notify, get, load_words, post_words, fetch_add, close, gone
  };
  struct Header {
    Kind kind;
    std::uint64_t offset;
    std::uint64_t count;  // bytes (put, put_data, put_notify, get) or words (load_words, post_words)
    std::uint64_t value;  // notify, put_notify, fetch_add
    std::uint64_t flag_offset = 0;  // put_notify: the flag raised after the data
    std::int64_t answer_tag = 0;  // requests that return something: the answer's tag
  };
  struct Posted {
    MPI_Request request = MPI_REQUEST_NULL;
    std::vector<std::byte> buffer;
  };
  struct Source {
    std::vector<MPI_Request> data;  // a put's data pieces being received into the window
    std::deque<std::vector<std::byte>> deferred;
  };
  struct Outgoing {
    MPI_Request request = MPI_REQUEST_NULL;
    std::vector<std::byte> buffer;  // the message (a copy: no send reads the window)
  };
  // What a request returns to its origin: `payload` (a get's a copy of the
  // window's bytes, so that no send still reads the window after a close
  // that gave up on a peer); nothing when !expected.
  struct Answer {
    bool expected = false;
    int tag = 0;
    std::vector<std::byte> payload;
  };

  // Target side.
  bool service();
  static bool serve_all();  // service() of every open transport of the process
  bool take_matched();
  bool finish_data_receives();
  bool finish_sends();
  Answer apply(int source, const std::byte* message, std::size_t bytes);
  void apply_and_answer(int source, const std::byte* message, std::size_t bytes);
  void post(Posted& slot);
  bool drop_late_answers();
  void say_gone();
  // Origin side.
  void send(int target, const Header& header, const void* data, std::size_t bytes);
  void ask(int target, Header header, const void* data, std::size_t bytes, void* answer, std::size_t answer_bytes,
           const char* what);
  int next_answer_tag(int target);
  // Waits for `request`, serving meanwhile and pausing between polls as
  // `backoff` says; throws after the wait limit (the request still active:
  // the caller cancels it).
  void wait(MPI_Request& request, int peer, const char* what, Backoff backoff);
  void wait(MPI_Request& request, int peer, const char* what);
  // Cancels a receive and completes it (local, as MPI guarantees after a
  // cancel); false if it had completed instead of being cancelled.
  static bool cancel_receive(MPI_Request& request);
  std::byte* at(std::size_t offset, std::size_t bytes, const char* what);

  // Locking order: a transport's mutex, then the registry's (serve_all);
  // serve_all only try-locks transports.
  std::recursive_mutex mutex_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::unique_ptr<std::byte[]> owned_window_;  // not value-initialised: only the zeroed part is touched
  std::byte* window_ = nullptr;                // owned_window_, or memory the constructor was given
  std::size_t window_bytes_ = 0;
  int rank_ = 0;
  int size_ = 0;
  int node_ranks_ = 0;
  std::chrono::milliseconds wait_limit_;
  ClockSync clock_;
  std::vector<Posted> posted_;  // matched in posting order: next_ is the oldest
  std::size_t next_ = 0;
  std::vector<Source> sources_;
  std::vector<int> receiving_;  // sources with a data receive outstanding
  std::deque<Outgoing> outgoing_;
  struct LateAnswer {
    int target;
    int tag;
  };
  std::vector<std::uint64_t> asks_;     // per target: requests that expected an answer
  std::vector<LateAnswer> given_up_;    // answers waited for in vain: dropped when they come
  int answer_tags_ = 0;                 // distinct answer tags per target
  int closed_peers_ = 0;
  std::vector<char> peer_closed_;  // per rank: its close arrived
  std::vector<char> peer_gone_;    // per rank: it stopped answering (waits on it fail at once)
};

}  // namespace earlybird
