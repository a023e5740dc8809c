// InlineAllreduce: allreduce_inline_flags (collectives/src/allreduce/
// inline_flags.cpp) run on data-carrying flag lines, for vectors of at most
// 448 bytes on ranks whose windows this process loads and stores directly
// (a shared-memory window on one node; simulated ranks).
//
// Each rank writes its vector into its own window, in the inline lines of
// the collective's lane (WindowLayout), as 64-byte cache lines: a sequence word (the flag value
// of this collective: sequence and signature) and up to 56 bytes of data.
// One writer per line, no MPI call, no flag apart from the data. Then it
// folds every rank's lines into its output in rank order (the same bits on
// every rank, any operator), each rank as soon as its lines carry this
// sequence.
//
// Cost: one write of m bytes, (P-1) m read and reduced, one line transfer
// per peer per 56 bytes; no round waits on another rank's partial result.
// Limitations: m <= 448 bytes (8 lines of 56 bytes); allreduce only (the lane rule below needs
// every rank's result to depend on every rank's input).
//
// Lane reuse: the lines of lane n % 2 are rewritten by collective n + 2,
// once every peer is known to have finished n (LaneGuard: implied after an
// allreduce, asked otherwise), so no reader sees them change under it.
//
// state       waits for                                   then
// guarding    every peer free for this sequence            write own lines
// folding     rank next_'s lines carry this sequence       fold it; next_++
// done        (next_ == P)
#pragma once

#include "collective_task.hpp"
#include "lane_guard.hpp"
#include "operation.hpp"
#include "../rma/transport.hpp"
#include "../rma/window_layout.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace earlybird {

class InlineAllreduce final : public CollectiveTask {
 public:
  static constexpr std::size_t kLineBytes = 64;
  static constexpr std::size_t kLines = 8;
  static constexpr std::size_t kPayloadBytes = kLineBytes - sizeof(std::uint64_t);
  // Bytes one call may carry for elements of `elem_bytes` (no element
  // straddles two lines).
  static constexpr std::size_t capacity(std::size_t elem_bytes) {
    return kLines * (kPayloadBytes / elem_bytes) * elem_bytes;
  }
  // Every rank's window when `transport` reaches them all directly; empty
  // otherwise.
  static std::vector<std::byte*> direct_windows(Transport& transport);

  // `windows`: direct_windows(transport), which must outlive the task.
  InlineAllreduce(const std::vector<std::byte*>& windows, int rank, LaneGuard& lanes, const WindowLayout& layout,
                  const OperationBuffers& buffers, std::size_t count, std::uint64_t signature,
                  std::chrono::steady_clock::duration timeout, std::shared_ptr<const std::string> description);

  bool talks_to_peers() const override { return count_ > 0 && size_ > 1; }
  void start(std::uint64_t sequence) override;
  bool poll() override;
  bool finished() const override { return next_ == size_ || failed_.load(std::memory_order_acquire); }
  std::exception_ptr error() const override;
  void fail(const std::string& cause) override;
  std::uint64_t sequence() const override { return sequence_; }
  const std::string& description() const override { return *description_; }

 private:
  using Clock = std::chrono::steady_clock;
  bool peers_free();
  void publish();
  // The lines of `rank`'s lane.
  std::byte* lines_of(int rank) const { return (*windows_)[static_cast<std::size_t>(rank)] + lane_offset_; }
  // True when every line of `rank` carries this collective's flag value;
  // fails the task on a line from a different collective.
  bool ready(int rank);
  void fold(int rank);
  void watch();

  const std::vector<std::byte*>* windows_;
  int rank_;
  int size_;
  LaneGuard* lanes_;
  WindowLayout layout_;
  OperationBuffers buffers_;
  std::size_t count_;
  std::size_t elem_;
  std::size_t per_line_;  // elements per line
  std::size_t lines_;     // lines this call uses
  std::uint64_t signature_;
  Clock::duration timeout_;
  std::shared_ptr<const std::string> description_;

  std::uint64_t sequence_ = 0;
  std::uint64_t value_ = 0;  // flag_value(sequence, signature)
  std::size_t lane_offset_ = 0;  // of this sequence's lane's inline lines
  bool published_ = false;
  int next_ = 0;  // the next rank to fold, in rank order
  std::uint32_t idle_polls_ = 0;
  bool progressed_since_watch_ = true;
  Clock::time_point deadline_;
  std::atomic<bool> failed_{false};
  mutable std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace earlybird
