// InlineCollective: the inline_flags entries of the catalogue (collectives/
// src/*/inline_flags.cpp) run on data-carrying flag lines, for calls whose
// published vector is at most 2240 bytes (coll::kInlineLinesBytes), on ranks whose windows this process
// loads and stores directly (a shared-memory window on one node; simulated
// ranks).
//
// A publishing rank writes its vector into its own window, in the inline
// lines of the collective's lane (WindowLayout): its data, contiguous, after
// a sequence word (the collective's flag value: sequence and signature) at
// the lines' start, the word release-stored after the data. The first 56
// bytes share the word's cache line; the data moves as one stream (a word
// in every line, as until 2026-12-02, cost 1.6-2x the time from 1 KiB on:
// docs/benchmarks.md, "The inline lines: one word, contiguous data"). One
// writer per line, no MPI call. A reading rank waits on the word of each
// rank it reads, then takes an element range of that rank's data straight
// from its lines into its output, folded in rank order (the same bits on
// every rank, any operator) or placed:
//
//   collective      publishes           reads                          into output
//   allreduce       every rank: input   every rank: all                fold
//   reduce          every rank: input*  root: every rank, all          fold
//   bcast           root: its buffer    non-roots: the root, all       place at 0
//   allgather       every rank: block   every rank: every rank, all    place at k x count
//   reduce_scatter  every rank: P blocks every rank: every rank, block r  fold
//
// * reduce's root folds its own part from its input and publishes nothing
//   (no peer reads it), unless in place with a rank before it: that rank's
//   part, folded first, overwrites the input, so the root keeps a copy in
//   its lines as the others do.
//
// Cost: one write of the published vector, per peer read one line transfer
// per 64 bytes from the word on (coll::inline_lines_read); no round waits on
// another rank's partial result.
// Limitations: published vector <= 2240 bytes (36 of the lane's 40 lines).
//
// Lane reuse: collective n uses inline lane n % 8 (WindowLayout); a rank
// rewrites it for n + 8 only once every peer is known to have finished n
// (LaneGuard: implied after an allreduce, allgather or reduce-scatter, asked
// otherwise: a remote read, once per seven calls of a rooted collective), so
// no reader sees them change under it.
//
// state       waits for                                     then
// guarding    every peer free for this sequence (publishers)  write own lines
// reading     rank next_'s word carries this sequence           fold or place it; next_++
// done        next_ past the last rank read
#pragma once

#include "collective_task.hpp"
#include "lane_guard.hpp"
#include "operation.hpp"
#include "watchdog.hpp"
#include "../rma/window_layout.hpp"

#include <earlybird/collectives/catalogue.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace earlybird {

class InlineCollective final : public CollectiveTask {
 public:
  static constexpr std::size_t kLineBytes = coll::kInlineLineBytes;
  static constexpr std::size_t kLines = coll::kInlineLines;
  // Elements of `elem_bytes` one rank may publish (what the model prices).
  static constexpr std::size_t capacity_elems(std::size_t elem_bytes) { return coll::kInlineLinesBytes / elem_bytes; }
  // Every rank's window when `transport` reaches them all directly; empty
  // otherwise.
  static std::vector<std::byte*> direct_windows(Transport& transport);
  // Elements a rank publishes in `collective` of `count` over `ranks` ranks.
  static std::size_t published_elems(coll::Collective collective, int ranks, std::size_t count);

  struct Call {
    coll::Collective collective;
    int root;
    std::size_t count;  // per rank, or per block (allgather, reduce_scatter)
  };
  // `windows`: direct_windows(transport), which must outlive the task.
  InlineCollective(const std::vector<std::byte*>& windows, int rank, LaneGuard& lanes, const WindowLayout& layout,
                   const OperationBuffers& buffers, Call call, std::uint64_t signature,
                   std::chrono::steady_clock::duration timeout, std::shared_ptr<const std::string> description);

  // Ready for another call of its shape with these buffers, without building
  // the task again (the fast path's calls come one after another). The
  // operator is taken again when it is a user one: calls of one shape agree
  // on a user operator's name only. False when the task failed: it keeps its
  // error, and the caller builds a new one.
  bool rearm(const void* input, void* output, const ReduceOp& op, std::shared_ptr<const void> keep_alive);

  bool talks_to_peers() const override { return call_.count > 0 && size_ > 1; }
  void start(std::uint64_t sequence) override;
  bool poll() override;
  bool finished() const override { return (published_ && next_ >= read_end_) || failure_.failed(); }
  std::exception_ptr error() const override;
  void fail(const std::string& cause) override;
  std::uint64_t sequence() const override { return sequence_; }
  const std::string& description() const override { return *description_; }
  std::optional<std::uint64_t> silent_flag_value() const override {
    if (!publishes_ || read_begin_ < read_end_) return std::nullopt;
    return value_;
  }

 private:
  using Clock = std::chrono::steady_clock;
  void plan_role();
  void publish();
  std::byte* lines_of(int rank) const { return (*windows_)[static_cast<std::size_t>(rank)] + lane_offset_; }
  // True when `rank`'s sequence word carries this collective's flag value;
  // fails the task on a word from another call.
  bool ready(int rank);
  // What this rank reads of `rank` is there: its input (reduce's root, its
  // own part) or `rank`'s lines (ready()).
  bool readable(int rank) { return (rank == rank_ && own_from_input_) || ready(rank); }
  // The elements this rank reads of `rank`'s lines.
  const std::byte* part_of(int rank) const;
  void take(int rank);
  // Reduce's root, its own part: straight from its input.
  void fold_own_input();
  void watch();

  const std::vector<std::byte*>* windows_;
  int rank_;
  int size_;
  LaneGuard* lanes_;
  WindowLayout layout_;
  OperationBuffers buffers_;
  Call call_;
  std::size_t elem_;
  std::uint64_t signature_;
  Watchdog watchdog_;
  std::shared_ptr<const std::string> description_;

  // This rank's role (plan_role).
  bool publishes_ = false;
  std::size_t published_elems_ = 0;
  int read_begin_ = 0, read_end_ = 0;  // ranks read, in rank order
  std::size_t read_first_ = 0, read_count_ = 0;  // element range read of each
  bool fold_ = false;  // fold (reductions) or place (allgather, bcast)

  std::uint64_t sequence_ = 0;
  std::uint64_t value_ = 0;  // flag_value(sequence, signature)
  std::size_t lane_offset_ = 0;  // of this sequence's lane's inline lines
  bool own_from_input_ = false;  // this call: reduce's root takes its own part from its input
  bool published_ = false;  // done publishing, or nothing to publish
  int next_ = 0;            // the next rank to read
  FirstFailure failure_;
};

}  // namespace earlybird
