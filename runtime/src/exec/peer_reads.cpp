#include "peer_reads.hpp"

#include "window_words.hpp"

#include <earlybird/error.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>

namespace earlybird {
namespace {

using coll::Collective;

// The signature lines 0 and 1 carry once their rank withdrew (no call's
// signature is this: see the constructor).
constexpr std::uint64_t kWithdrawn = kSignatureMask;

std::uint64_t signature_for_lines(std::uint64_t signature) {
  signature &= kSignatureMask;
  return signature == kWithdrawn ? signature - 1 : signature;
}

std::uint64_t sequence_in(std::uint64_t word) { return word >> kSignatureBits; }

bool overlap(const std::byte* a, const std::byte* b, std::size_t bytes) { return a < b + bytes && b < a + bytes; }

}  // namespace

PeerReads::PeerReads(Transport& transport, const std::vector<std::byte*>& windows, LaneGuard& lanes,
                     const WindowLayout& layout, const OperationBuffers& buffers, Call call, std::uint64_t signature,
                     Clock::duration timeout, std::shared_ptr<const std::string> description)
    : transport_(&transport),
      windows_(&windows),
      lanes_(&lanes),
      layout_(layout),
      buffers_(buffers),
      call_(call),
      rank_(transport.rank()),
      size_(static_cast<int>(windows.size())),
      elem_(size_of(buffers.type)),
      signature_(signature_for_lines(signature)),
      watchdog_(timeout),
      description_(std::move(description)) {}

// The table in the header, for this rank.
bool PeerReads::reads(int rank) const {
  switch (call_.collective) {
    case Collective::allgather:
      return rank != rank_;
    case Collective::bcast:
      return rank_ != call_.root && rank == call_.root;
    case Collective::reduce:
      return rank_ == call_.root;
    case Collective::reduce_scatter:
    case Collective::allreduce:
      return true;
  }
  return false;
}

bool PeerReads::is_read_by(int rank) const {
  if (rank == rank_) return false;
  switch (call_.collective) {
    case Collective::bcast:
      return rank_ == call_.root;
    case Collective::reduce:
      return rank == call_.root;
    default:
      return true;
  }
}

bool PeerReads::folds() const {
  return call_.collective != Collective::allgather && call_.collective != Collective::bcast;
}

std::size_t PeerReads::slice_first(int rank) const {
  return call_.count * static_cast<std::size_t>(rank) / static_cast<std::size_t>(size_);
}

PeerReads::Piece PeerReads::piece_of(int rank) const {
  const std::size_t n = call_.count;
  switch (call_.collective) {
    case Collective::allgather:
      return {false, 0, n, static_cast<std::size_t>(rank) * n};
    case Collective::reduce_scatter:
      return {false, static_cast<std::size_t>(rank_) * n, n, 0};
    case Collective::allreduce: {
      const std::size_t first = slice_first(rank_);
      return {false, first, slice_first(rank_ + 1) - first, first};
    }
    default:  // bcast, reduce
      return {false, 0, n, 0};
  }
}

static_assert(coll::kInlinePayloadOffset + coll::kInlineLinesBytes <=
              (coll::kInlineLines - 2) * coll::kInlineLineBytes);

std::byte* PeerReads::line(int rank, Line which) const {
  return (*windows_)[static_cast<std::size_t>(rank)] + lane_offset_ + which * coll::kInlineLineBytes;
}

void PeerReads::write_line(Line which, std::uintptr_t input, std::uintptr_t output) {
  std::byte* l = line(rank_, which);
  if (which == kWhere) {
    std::memcpy(l + 8, &input, sizeof input);
    std::memcpy(l + 16, &output, sizeof output);
  }
  store_release(l, value_);
}

bool PeerReads::line_ready(int rank, Line which) {
  const std::uint64_t seen = load_acquire(line(rank, which));
  if (seen == value_) return true;
  const std::uint64_t sequence = sequence_in(seen);
  if (which == kRead && sequence > sequence_) return true;
  if (seen == flag_value(sequence_, kWithdrawn))
    fail("rank " + std::to_string(rank) + " failed in this collective and withdrew");
  else if (sequence >= sequence_)
    fail(different_collective("rank " + std::to_string(rank)));
  return false;
}

void PeerReads::start(std::uint64_t sequence) {
  sequence_ = sequence;
  if (sequence == 0) return local_copy();
  value_ = flag_value(sequence, signature_);
  lane_offset_ = layout_.inline_offset(static_cast<int>(sequence % WindowLayout::kInlineLanes));
  as_ready_ = folds() && reads(rank_) && buffers_.op.commutative();
  folded_any_ = false;
  where_.assign(static_cast<std::size_t>(size_), {});
  done_.assign(static_cast<std::size_t>(size_), 0);
  stage_ = Stage::guarding;
  poll();
}

// Nothing to exchange (count 0, or one rank): output = input.
void PeerReads::local_copy() {
  const std::size_t bytes = call_.count * elem_;
  if (bytes > 0 && buffers_.input && buffers_.output && buffers_.input != buffers_.output)
    std::memcpy(buffers_.output, buffers_.input, bytes);
  stage_ = Stage::done;
}

bool PeerReads::poll() {
  if (finished()) return false;
  if (failure_.failed()) return withdraw();
  bool progressed = false;
  try {
    if (stage_ == Stage::guarding) progressed = guard() || progressed;
    if (stage_ == Stage::reading) progressed = read_stage() || progressed;
    if (stage_ == Stage::placing) progressed = place_stage() || progressed;
    if (stage_ == Stage::releasing) progressed = release_stage() || progressed;
  } catch (const std::exception& e) {
    fail(e.what());
  }
  if (progressed)
    watchdog_.progressed();
  else
    watch();
  if (failure_.failed()) return withdraw() || true;
  return progressed;
}

// Publishes where this rank's buffers are, once no peer may still read the
// lane's previous call; places this rank's own part where it goes (an
// allgather's block, a bcast root's buffer, a commutative fold's start)
// unless it is there already (in place).
bool PeerReads::guard() {
  if (!lanes_->all_free(rank_, sequence_, WindowLayout::kInlineLanes)) return false;
  write_line(kWhere, reinterpret_cast<std::uintptr_t>(buffers_.input),
             reinterpret_cast<std::uintptr_t>(buffers_.output));
  published_ = true;
  std::atomic_thread_fence(std::memory_order_seq_cst);  // withdraw() and took_part()
  if (call_.collective == Collective::allgather || (call_.collective == Collective::bcast && rank_ == call_.root))
    place_own();
  stage_ = Stage::reading;
  return true;
}

void PeerReads::place_own() {
  if (!buffers_.input || !buffers_.output) return;
  const Piece own = piece_of(rank_);
  std::byte* to = buffers_.output + own.to * elem_;
  const std::byte* from = buffers_.input + own.first * elem_;
  if (to != from) std::memcpy(to, from, own.count * elem_);
}

bool PeerReads::reads_anything() const {
  for (int k = 0; k < size_; ++k)
    if (reads(k)) return true;
  return false;
}

// Peers are visited from rank + 1 round, so that each owner's buffers are
// read by about one rank at a time, not by every reader at once as a visit
// in rank order would have it.
template <class Waited, class Take>
bool PeerReads::take_ready(Line which, Waited waited, Take take, bool& progressed) {
  bool all = true;
  for (int i = 1; i <= size_ && !failure_.failed(); ++i) {
    const int k = (rank_ + i) % size_;
    auto& taken = done_[static_cast<std::size_t>(k)];
    if (!waited(k) || taken) continue;
    if (!line_ready(k, which)) {
      all = false;
      continue;
    }
    taken = 1;
    progressed = true;
    take(k);
  }
  return all && !failure_.failed();
}

// Places (a commutative fold: folds in) each rank's piece as soon as its
// line 0 is there; any other fold waits for all of them (rank order).
bool PeerReads::read_stage() {
  bool progressed = false;
  const bool all = take_ready(
      kWhere, [&](int k) { return reads(k) && k != rank_; },
      [&](int k) {
        std::memcpy(&where_[static_cast<std::size_t>(k)].input, line(k, kWhere) + 8, sizeof(std::uintptr_t));
        std::memcpy(&where_[static_cast<std::size_t>(k)].output, line(k, kWhere) + 16, sizeof(std::uintptr_t));
        if (as_ready_)
          fold_in(k, piece_of(k));
        else if (!folds())
          place(k, piece_of(k));
      },
      progressed);
  if (!all) return progressed;
  if (folds() && reads(rank_) && !as_ready_) fold_all();
  if (as_ready_ && !folded_any_) place_own();
  std::fill(done_.begin(), done_.end(), 0);
  if (call_.collective == Collective::allreduce) {
    write_line(kReduced);
    stage_ = Stage::placing;
  } else {
    if (reads_anything()) write_line(kRead);
    stage_ = Stage::releasing;
  }
  return true;
}

// Allreduce: every peer's final slice, as each becomes final.
bool PeerReads::place_stage() {
  bool progressed = false;
  const bool all = take_ready(
      kReduced, [&](int k) { return k != rank_; },
      [&](int k) {
        const std::size_t first = slice_first(k);
        place(k, {true, first, slice_first(k + 1) - first, first});
      },
      progressed);
  if (!all) return progressed;
  std::fill(done_.begin(), done_.end(), 0);
  write_line(kRead);
  stage_ = Stage::releasing;
  return true;
}

// Done once every rank reading this one's buffers says it has finished.
bool PeerReads::release_stage() {
  bool progressed = false;
  if (!take_ready(kRead, [&](int k) { return is_read_by(k); }, [](int) {}, progressed)) return progressed;
  stage_ = Stage::done;
  return true;
}

// After a failure (the header's "withdrawing"): peers that may have taken
// line 0 are told, and waited for, before the caller gets its buffers back.
bool PeerReads::withdraw() {
  if (!published_) {
    stage_ = Stage::done;
    return true;
  }
  bool progressed = false;
  if (stage_ != Stage::withdrawing) {
    const std::uint64_t withdrawn = flag_value(sequence_, kWithdrawn);
    store_release(line(rank_, kWhere), withdrawn);
    if (stage_ == Stage::reading) store_release(line(rank_, kReduced), withdrawn);
    store_release(line(rank_, kRead), value_);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    for (int k = 0; k < size_; ++k) done_[static_cast<std::size_t>(k)] = !took_part(k);
    stage_ = Stage::withdrawing;
    progressed = true;
  }
  bool all = true;
  for (int k = 0; k < size_; ++k) {
    auto& finished_reading = done_[static_cast<std::size_t>(k)];
    if (!finished_reading && sequence_in(load_acquire(line(k, kRead))) >= sequence_) {
      finished_reading = 1;
      progressed = true;
    }
    all = all && finished_reading;
  }
  if (progressed)
    watchdog_.progressed();
  else if (watchdog_.idle_poll_expired())
    all = true;  // a reader silent for a whole timeout: read() catches its late copies
  if (all) stage_ = Stage::done;
  return progressed || all;
}

bool PeerReads::took_part(int rank) const {
  return is_read_by(rank) && sequence_in(load_acquire(line(rank, kWhere))) >= sequence_;
}

std::uintptr_t PeerReads::address_of(int rank, const Piece& piece) const {
  const Where& where = where_[static_cast<std::size_t>(rank)];
  return (piece.from_output ? where.output : where.input) + piece.first * elem_;
}

const std::byte* PeerReads::mapped(int rank, const Piece& piece) const {
  return transport_->mapped_peer_memory(rank, address_of(rank, piece), piece.count * elem_);
}

// A withdrawal after the owner's watchdog gave up on this rank shows in
// its line 0 once the copy is done (the copy may then hold anything).
void PeerReads::check_not_withdrawn(int rank) {
  std::atomic_thread_fence(std::memory_order_acquire);
  if (load_acquire(line(rank, kWhere)) != value_)
    throw Error("rank " + std::to_string(rank) + " withdrew its buffers while this rank read them");
}

void PeerReads::read(int rank, const Piece& piece, std::byte* to) {
  if (piece.count == 0) return;
  if (const std::byte* from = mapped(rank, piece)) {
    std::memcpy(to, from, piece.count * elem_);
    return check_not_withdrawn(rank);
  }
  try {
    transport_->read_peer_memory(rank, address_of(rank, piece), to, piece.count * elem_);
  } catch (const std::exception& e) {
    throw Error("reading rank " + std::to_string(rank) + "'s buffer: " + e.what());
  }
  check_not_withdrawn(rank);
}

void PeerReads::place(int rank, const Piece& piece) { read(rank, piece, buffers_.output + piece.to * elem_); }

// A fold's unit (coll::kPeerReadChunkBytes): a peer's chunk read into a
// buffer, then reduced into the output while both are in cache.
std::size_t PeerReads::chunk_elems() const { return std::max<std::size_t>(1, coll::kPeerReadChunkBytes / elem_); }

// output[piece] = (output or, first, this rank's own piece) op rank's piece:
// straight from a mapped peer, else a chunk read at a time.
void PeerReads::fold_in(int rank, const Piece& piece) {
  std::byte* out = buffers_.output + piece.to * elem_;
  const std::byte* base = folded_any_ ? out : buffers_.input + piece_of(rank_).first * elem_;
  folded_any_ = true;
  if (piece.count == 0) return;
  if (const std::byte* from = mapped(rank, piece)) {
    buffers_.op.apply(buffers_.type, out, base, from, piece.count);
    return check_not_withdrawn(rank);
  }
  const std::size_t chunk = chunk_elems();
  chunk_.resize(chunk * elem_);
  for (std::size_t offset = 0; offset < piece.count; offset += chunk) {
    const std::size_t n = std::min(chunk, piece.count - offset);
    read(rank, {false, piece.first + offset, n, 0}, chunk_.data());
    buffers_.op.apply(buffers_.type, out + offset * elem_, base + offset * elem_, chunk_.data(), n);
  }
}

void PeerReads::fold_all() {
  const Piece piece = piece_of(rank_);
  if (piece.count == 0) return;
  const std::size_t chunk_elems = this->chunk_elems();
  std::byte* out = buffers_.output + piece.to * elem_;
  const std::byte* own = buffers_.input + piece.first * elem_;
  const bool aliased = overlap(out, own, piece.count * elem_);
  chunk_.resize(chunk_elems * elem_);
  if (aliased) own_chunk_.resize(chunk_elems * elem_);
  for (std::size_t offset = 0; offset < piece.count; offset += chunk_elems) {
    const std::size_t n = std::min(chunk_elems, piece.count - offset);
    const std::size_t bytes = n * elem_;
    std::byte* dst = out + offset * elem_;
    const std::byte* mine = own + offset * elem_;
    if (aliased) {
      std::memcpy(own_chunk_.data(), mine, bytes);
      mine = own_chunk_.data();
    }
    for (int k = 0; k < size_; ++k) {
      // Rank 0's part lands in the output directly; later ones are reduced into it.
      std::byte* into = k == 0 ? dst : chunk_.data();
      const std::byte* src = mine;
      if (k != rank_) {
        const Piece part{false, piece.first + offset, n, 0};
        src = mapped(k, part);
        if (!src) {
          read(k, part, into);
          src = into;
        }
      }
      if (k == 0) {
        if (src != dst) std::memcpy(dst, src, bytes);
      } else {
        buffers_.op.apply(buffers_.type, dst, dst, src, n);
      }
      if (k != rank_ && src != into) check_not_withdrawn(k);  // loaded from its mapping
    }
  }
}

void PeerReads::watch() {
  if (!watchdog_.idle_poll_expired()) return;
  const std::string after = watchdog_.timeout_text();
  if (stage_ == Stage::guarding)
    return time_out("watchdog: peers did not finish the collective before this one for " + after);
  time_out("watchdog: no notification arrived for " + after + "; still waiting for" + waiting_for());
}

std::string PeerReads::waiting_for() const {
  std::string ranks;
  for (int k = 0; k < size_; ++k) {
    const bool waited = stage_ == Stage::reading    ? reads(k) && k != rank_
                        : stage_ == Stage::placing  ? k != rank_
                        : stage_ == Stage::releasing ? is_read_by(k)
                                                     : false;
    if (waited && !done_[static_cast<std::size_t>(k)]) ranks += (ranks.empty() ? " rank " : ", rank ") + std::to_string(k);
  }
  return ranks;
}

void PeerReads::fail(const std::string& cause) {
  if (!failure_.failed()) failure_.set(std::make_exception_ptr(Error(*description_ + ": " + cause)));
}

}  // namespace earlybird
