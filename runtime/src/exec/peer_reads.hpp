// PeerReads: the peer_reads entries of the catalogue, on ranks that read each
// other's user buffers directly (Transport::reads_peer_memory: one node,
// process_vm_readv; simulated ranks). Each rank publishes where its buffers
// are; every rank copies what it needs straight out of its peers' buffers,
// once, into its output (placing it, or folding it: in rank order, or as each
// rank comes for a commutative operator); a rank finishes once every rank
// that reads its buffers says it is done with them.
//
// Published in the rank's own inline lane of the collective (WindowLayout:
// sequence n uses inline lane n % 8), one writer per line, each line's first
// word the collective's flag value, release-stored after the rest:
//   line 0   where: the input and output addresses
//   line 38  reduced: this rank's slice of an allreduce is final
//   line 39  read: this rank has read all it reads of the others' buffers
// (the last two lines of the lane: an inline call on the lane before wrote
// data into the lines between, never into these).
//
//   collective      reads                                           into output
//   allgather       every peer's input                              place at k x count
//   bcast           non-roots: the root's buffer                    place
//   reduce          root: every rank's input                        fold
//   reduce_scatter  every rank's input, block r                     fold
//   allreduce       every rank's input, slice r (of P);             fold, then place
//                   then every peer's output, slice k, once final
//
// Cost (m bytes per rank's vector): allgather (P-1) m read per rank and its
// own block copied (m, unless in place); bcast m
// per non-root, all reading the root's buffer at once; reduce (P-1) m read
// and reduced at the root; reduce_scatter (P-1) m read and reduced per rank;
// allreduce (P-1) m/P read and reduced and another (P-1) m/P read per rank.
// Each byte is copied once (against twice through the window), by a system
// call per peer read (folds: per 128 KiB chunk), or, where the buffer lies in
// the peer's shared arena (earlybird/shared_memory.hpp), by loads from this
// process's mapping of it (Transport::mapped_peer_memory): a place is a
// memcpy, a fold reduces straight from it, and a commutative fold's first
// peer is reduced with this rank's own part in one pass; the owner of a buffer
// waits for its readers' line 2, a synchronisation the schedules' puts do
// not have (an MPI bcast root may return before any reader has the data).
// Each rank visits its peers from rank + 1 round, so an owner's buffers are
// read by about one reader at a time (in rank order every reader started on
// rank 0: at P = 16 an allgather of 1 MiB blocks took 8.2 ms against 5.0).
// auto prices this path with coll::predict_peer_reads.
// Folds: with a commutative operator, each rank's part is folded in as soon
// as it publishes (arrival order: a late rank's part comes last, the others'
// are folded while it is away); otherwise, once every rank has published, in
// rank order, chunk by chunk.
// Limitations: needs Transport::reads_peer_memory; one batch at any size.
//
// A failure after line 0 went out (a mismatched peer, the watchdog, a read
// error) withdraws: line 0 and, unless written, line 1 carry kWithdrawn
// (readers that have not taken them fail instead of reading), line 2 says
// this rank reads nothing more, and the task finishes only once every rank
// that reads this one's buffers and had published its own line 0 (so may
// have taken this one's) wrote line 2: a failed call never returns while a
// peer still copies out of its buffers. A fence after each rank's line 0
// makes that test exact (of two ranks, at least one sees the other's line
// 0). Readers check the owner's line 0 again after each copy, so a copy
// that raced a withdrawal past the watchdog is an error, not a result. A
// reader that died after its line 0 costs the withdrawal a second timeout.
//
// Lane reuse as InlineCollective's: a rank writes its lines for n once every
// peer finished n - 8 (LaneGuard). A rank that wrote any line of a later
// call in this lane has finished n, so waits for line 2 accept later
// sequences; lines 0 and 1 must carry this call's value exactly.
//
// state       waits for                                     then
// guarding    every peer free for this sequence (LaneGuard)  publish line 0
// reading     line 0 of the ranks it reads                   place (commutative: fold) each as it
//                                                            is ready, or fold all in rank order;
//                                                            allreduce: line 1
// placing     (allreduce) line 1 of each peer                read its final slice
// releasing   line 2 of every rank that reads this one       done (line 2 written on entry)
// withdrawing line 2 of the readers that had published line 0  done, failed (lines written on entry)
#pragma once

#include "collective_task.hpp"
#include "lane_guard.hpp"
#include "operation.hpp"
#include "watchdog.hpp"
#include "../rma/transport.hpp"
#include "../rma/window_layout.hpp"

#include <earlybird/collectives/catalogue.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace earlybird {

class PeerReads final : public CollectiveTask {
 public:
  struct Call {
    coll::Collective collective;
    int root;
    std::size_t count;  // per rank, or per block (allgather, reduce_scatter)
  };
  // `windows`: every rank's window (InlineCollective::direct_windows), which
  // must outlive the task, as must `transport` and `lanes`.
  PeerReads(Transport& transport, const std::vector<std::byte*>& windows, LaneGuard& lanes,
            const WindowLayout& layout, const OperationBuffers& buffers, Call call, std::uint64_t signature,
            std::chrono::steady_clock::duration timeout, std::shared_ptr<const std::string> description);

  bool talks_to_peers() const override { return call_.count > 0 && size_ > 1; }
  void start(std::uint64_t sequence) override;
  bool poll() override;
  bool finished() const override { return stage_ == Stage::done || (failure_.failed() && !published_); }
  std::exception_ptr error() const override { return failure_.error(); }
  void fail(const std::string& cause) override;
  std::uint64_t sequence() const override { return sequence_; }
  const std::string& description() const override { return *description_; }

 private:
  using Clock = std::chrono::steady_clock;
  enum class Stage { guarding, reading, placing, releasing, withdrawing, done };
  // Lines of the lane whose first word is never an inline call's data (the
  // inline lines' data ends before the last two).
  enum Line : std::size_t { kWhere = 0, kReduced = coll::kInlineLines - 2, kRead = coll::kInlineLines - 1 };
  struct Where {
    std::uintptr_t input = 0, output = 0;
  };
  // An element range of a rank's buffer and where it goes in this rank's output.
  struct Piece {
    bool from_output = false;  // the rank's output (allreduce's final slices), else its input
    std::size_t first = 0;     // elements into that buffer
    std::size_t count = 0;
    std::size_t to = 0;        // elements into this rank's output
  };

  bool reads(int rank) const;        // in the reading stage
  bool is_read_by(int rank) const;   // `rank` reads this rank's buffers
  bool folds() const;
  bool reads_anything() const;       // reads(k) for some rank k
  // Calls take(k) for every rank k with waited(k), not taken in this stage
  // yet, whose `which` line is ready (marking it in done_), from rank + 1
  // round; true once all are taken and nothing failed.
  template <class Waited, class Take>
  bool take_ready(Line which, Waited waited, Take take, bool& progressed);
  Piece piece_of(int rank) const;    // what the reading stage takes of `rank`
  std::size_t slice_first(int rank) const;  // allreduce: rank's slice of the count
  std::byte* line(int rank, Line which) const;
  void write_line(Line which, std::uintptr_t input = 0, std::uintptr_t output = 0);
  // True when `rank`'s line carries this call's value (line 2: or a later
  // call's); fails the task when it shows another collective.
  bool line_ready(int rank, Line which);

  bool guard();
  bool read_stage();
  bool place_stage();
  bool release_stage();
  bool withdraw();
  // Rank k's readiness for withdraw(): may hold a view of this rank's line 0.
  bool took_part(int rank) const;
  // Where `piece` lies in `rank`'s process.
  std::uintptr_t address_of(int rank, const Piece& piece) const;
  // Where `piece` of `rank` can be loaded from directly (the peer's shared
  // arena: Transport::mapped_peer_memory); nullptr when it must be read.
  const std::byte* mapped(int rank, const Piece& piece) const;
  // Throws when `rank` withdrew its buffers: checked after every copy or
  // load out of them.
  void check_not_withdrawn(int rank);
  // Reads `piece` of `rank` to `to` (its `to` field ignored), or into this
  // rank's output where the piece says (place).
  void read(int rank, const Piece& piece, std::byte* to);
  void place(int rank, const Piece& piece);
  // output[to, to + count) = x_0 op x_1 op ... op x_{P-1}, each rank's
  // piece_of(), in chunks, in rank order.
  void fold_all();
  // A commutative fold, one rank as it comes: output op= its piece; the
  // first one folded starts from this rank's own piece (no copy of it first).
  void fold_in(int rank, const Piece& piece);
  void place_own();  // this rank's own piece into its output, unless there already
  std::size_t chunk_elems() const;
  void local_copy();  // sequence 0: nothing to exchange
  void watch();
  std::string waiting_for() const;

  Transport* transport_;
  const std::vector<std::byte*>* windows_;
  LaneGuard* lanes_;
  WindowLayout layout_;
  OperationBuffers buffers_;
  Call call_;
  int rank_;
  int size_;
  std::size_t elem_;
  std::uint64_t signature_;
  Watchdog watchdog_;
  std::shared_ptr<const std::string> description_;

  std::uint64_t sequence_ = 0;
  std::uint64_t value_ = 0;      // flag_value(sequence, signature)
  std::size_t lane_offset_ = 0;  // of this sequence's inline lane
  Stage stage_ = Stage::guarding;
  bool published_ = false;       // line 0 went out: peers may read this rank's buffers
  bool as_ready_ = false;        // a commutative fold, rank by rank as each publishes
  bool folded_any_ = false;      // as_ready_: a peer's piece is in the output
  std::vector<Where> where_;     // per rank, once its line 0 was seen
  std::vector<char> done_;       // per rank: taken in the current stage (take_ready)
  std::vector<std::byte> chunk_, own_chunk_;  // fold buffers
  FirstFailure failure_;
};

}  // namespace earlybird
