// Layout of a communicator's window: a header, the arrival board, eight
// inline lanes (exec/inline_collective.hpp: only that executor writes them,
// so a stale line holds an older flag value, never data; sequence number n
// uses inline lane n % 8), then the lanes of the collectives run as
// Operations, each with a flag area and scratch: two large lanes (n uses
// large lane n % 2; 65 536 flags and 8 MiB of scratch by default) and eight
// small ones (n uses small lane n % 8; 1024 flags, 64 KiB of scratch) for the
// calls whose plan fits one (every rank's bounds, coll::RankPlan::max_*, so
// all ranks agree) and is not an arrival-ordered stand-in. The flag areas
// come before the scratch, so everything that must start zero is one prefix
// (window_size().zeroed); the scratch is never zeroed, nor a large lane's
// pages touched, before a collective writes it.
//
//   [ header ][ arrival board ][ done table ][ inline 0..7 ][ flags L0 | L1 | S0..S7 ][ scratch S0..S7 ][ scratch L0 | L1 ]
//
// Header words: done (the sequence number of the last collective this rank
// finished, which its peers read), entered (of the last one it started:
// straggler reports), warm-up (target of edge()'s warm-up writes), ticket
// counter (used in rank 0's window: arrival tickets). The arrival board's words are laid out by
// pap/arrival_board.hpp; only rank 0's is used, every rank has one so that
// all windows have one layout.
//
// A rank writes a peer's lane for collective n only once it knows the peer
// finished the lane's previous user, or a later collective: n-2 for a large
// lane, n-8 for a small or an inline lane (LaneGuard, docs/design.md). Eight
// lanes let a rooted collective (bcast, reduce), whose completion tells a
// rank nothing about its peers, learn how far a peer got once per four
// calls, not every other call. Where words travel as messages, the peer
// tells it unasked (the done table: one message each way, not a round trip
// on the writer's path); elsewhere the writer reads the peer's done word.
// Flags carry the sequence number, so a flag left over from n never
// satisfies a wait of a later collective.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "transport.hpp"

#include <earlybird/collectives/catalogue.hpp>

namespace earlybird {

struct WindowLayout {
  static constexpr int kLanes = 2;       // large lanes: 0, 1
  static constexpr int kSmallLanes = 8;  // small lanes: kLanes .. kLanes + 7
  static constexpr std::size_t kSmallFlags = 1024;
  static constexpr std::size_t kSmallScratchBytes = 64 * 1024;
  static constexpr int kInlineLanes = 8;
  static constexpr std::size_t kHeaderBytes = 64;
  static constexpr std::size_t kDoneWordOffset = 0;
  static constexpr std::size_t kEnteredWordOffset = 8;
  static constexpr std::size_t kWarmUpWordOffset = 16;
  static constexpr std::size_t kTicketCounterOffset = 24;
  static constexpr std::size_t kBoardOffset = kHeaderBytes;
  static constexpr std::size_t kInlineBytes = coll::kInlineLines * coll::kInlineLineBytes;  // per inline lane: its cache lines
  int ranks = 1;
  std::size_t flags_per_lane = 0;
  std::size_t scratch_bytes = 0;  // per lane, a multiple of 64

  // Arrival board: estimates[2][P], then per parity tickets[P], arrivals[P],
  // decision[P + 1] (8 P + 2 words), rounded up to 64 bytes.
  std::size_t board_bytes() const {
    const std::size_t words = 8 * static_cast<std::size_t>(ranks) + 2;
    return (words * sizeof(std::uint64_t) + 63) / 64 * 64;
  }
  // Done table: word p holds the last collective rank p told this rank it
  // finished (LaneGuard: pushed where reading p's done word is a round
  // trip), rounded up to 64 bytes.
  std::size_t done_table_offset(int peer) const {
    return kHeaderBytes + board_bytes() + static_cast<std::size_t>(peer) * sizeof(std::uint64_t);
  }
  std::size_t done_table_bytes() const { return (static_cast<std::size_t>(ranks) * sizeof(std::uint64_t) + 63) / 64 * 64; }
  std::size_t inline_offset(int inline_lane) const {
    return kHeaderBytes + board_bytes() + done_table_bytes() + static_cast<std::size_t>(inline_lane) * kInlineBytes;
  }
  // A small lane's share, never more than a large lane's.
  std::size_t small_flags() const { return std::min(kSmallFlags, flags_per_lane); }
  std::size_t small_scratch_bytes() const { return std::min(kSmallScratchBytes, scratch_bytes); }
  // Whether a plan needing `scratch` bytes and `flags` flags (its bounds
  // over every rank) fits a small lane, or a large one.
  bool fits_lane(bool small, std::size_t scratch, std::size_t flags) const {
    return scratch <= (small ? small_scratch_bytes() : scratch_bytes) &&
           flags <= (small ? small_flags() : flags_per_lane);
  }
  // The lane of collective `sequence`, and how many collectives apart its
  // users are (LaneGuard's distance).
  struct Lane {
    int index = 0;
    int distance = kLanes;
  };
  static Lane lane_of(std::uint64_t sequence, bool small) {
    if (small) return {kLanes + static_cast<int>(sequence % kSmallLanes), kSmallLanes};
    return {static_cast<int>(sequence % kLanes), kLanes};
  }

  std::size_t flag_offset(int lane, std::uint32_t flag) const {
    const auto l = static_cast<std::size_t>(lane);
    const std::size_t before = lane < kLanes ? l * flags_per_lane : kLanes * flags_per_lane + (l - kLanes) * small_flags();
    return inline_offset(kInlineLanes) + (before + flag) * sizeof(std::uint64_t);
  }
  // Where the scratch begins: every byte before it starts zero.
  std::size_t zeroed_bytes() const { return (flag_offset(kLanes + kSmallLanes, 0) + 63) / 64 * 64; }
  // The small lanes' scratch first (a communicator faults it in at creation).
  std::size_t scratch_offset(int lane) const {
    const auto l = static_cast<std::size_t>(lane);
    if (lane >= kLanes) return zeroed_bytes() + (l - kLanes) * small_scratch_bytes();
    return zeroed_bytes() + kSmallLanes * small_scratch_bytes() + l * scratch_bytes;
  }
  std::size_t total_bytes() const { return scratch_offset(kLanes - 1) + scratch_bytes; }
  WindowSize window_size() const { return {total_bytes(), zeroed_bytes()}; }
};

// Flag words hold (sequence << kSignatureBits) | signature. The signature is a
// hash of the collective's arguments, so a peer that called with a different
// count, type, op or algorithm is detected instead of corrupting data.
constexpr int kSignatureBits = 24;
constexpr std::uint64_t kSignatureMask = (std::uint64_t{1} << kSignatureBits) - 1;
inline std::uint64_t flag_value(std::uint64_t sequence, std::uint64_t signature) {
  return (sequence << kSignatureBits) | (signature & kSignatureMask);
}
// The cause a task fails with when `peer`'s word carries another call's value.
inline std::string different_collective(const std::string& peer) {
  return peer + " called a different collective (count, type, op, root or algorithm differ, or calls are out of order)";
}

}  // namespace earlybird
