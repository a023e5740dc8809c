// Layout of a communicator's window: a header, the arrival board, eight
// inline lanes (exec/inline_collective.hpp: only that executor writes them,
// so a stale line holds an older flag value, never data; sequence number n
// uses inline lane n % 8), then L lanes used in turn by the collectives run
// as Operations (n uses lane n % L), each with a flag area and scratch. The
// flag areas come before the scratch, so everything that must start zero is
// one prefix (window_size().zeroed): the scratch, 8 MiB a lane by default,
// is never zeroed, nor its pages touched, before a collective writes it.
//
//   [ header ][ arrival board ][ inline 0 | ... | inline 7 ][ flags 0 | ... | flags L-1 ][ scratch 0 | ... | scratch L-1 ]
//
// L is 2 (kDirectLanes) where a rank asks a peer how far it got with a load
// (windows reached directly, RMA). Where every word travels as a message
// (point-to-point, hybrid transports) asking is a round trip across the
// network, so there are 8 lanes (kMessageLanes, for_transport): the same
// flags divided among them, each with a lane's scratch. A rooted collective
// then asks once per seven calls, not every other one.
//
// Header words: done (the sequence number of the last collective this rank
// finished), entered (of the last one it started: straggler reports),
// warm-up (target of edge()'s warm-up writes), ticket counter (used in rank
// 0's window: arrival tickets). The arrival board's words are laid out by
// pap/arrival_board.hpp; only rank 0's is used, every rank has one so that
// all windows have one layout.
//
// A rank writes a peer's lane for collective n only once it knows the peer
// finished the lane's previous user: n-L for the L lanes, n-8 for the
// inline lanes (LaneGuard, docs/design.md). Eight inline lanes let a rooted
// collective (bcast, reduce), whose completion tells a rank nothing about
// its peers, ask a peer how far it got once per seven calls, not every other
// call. Flags carry the sequence number, so a flag left over from n never
// satisfies a wait of n+L.
#pragma once

#include <cstddef>
#include <cstdint>

#include "transport.hpp"

#include <earlybird/collectives/catalogue.hpp>

namespace earlybird {

struct WindowLayout {
  static constexpr int kDirectLanes = 2;
  static constexpr int kMessageLanes = 8;
  static constexpr int kInlineLanes = 8;
  static constexpr std::size_t kHeaderBytes = 64;
  static constexpr std::size_t kDoneWordOffset = 0;
  static constexpr std::size_t kEnteredWordOffset = 8;
  static constexpr std::size_t kWarmUpWordOffset = 16;
  static constexpr std::size_t kTicketCounterOffset = 24;
  static constexpr std::size_t kBoardOffset = kHeaderBytes;
  static constexpr std::size_t kInlineBytes = coll::kInlineLines * 64;  // per inline lane: its cache lines
  int ranks = 1;
  int lanes = kDirectLanes;
  std::size_t flags_per_lane = 0;
  std::size_t scratch_bytes = 0;  // per lane, a multiple of 64

  // Arrival board: estimates[2][P], then per parity tickets[P], arrivals[P],
  // decision[P + 1] (8 P + 2 words), rounded up to 64 bytes.
  std::size_t board_bytes() const {
    const std::size_t words = 8 * static_cast<std::size_t>(ranks) + 2;
    return (words * sizeof(std::uint64_t) + 63) / 64 * 64;
  }
  std::size_t inline_offset(int inline_lane) const {
    return kHeaderBytes + board_bytes() + static_cast<std::size_t>(inline_lane) * kInlineBytes;
  }
  std::size_t flag_offset(int lane, std::uint32_t flag) const {
    return inline_offset(kInlineLanes) + (static_cast<std::size_t>(lane) * flags_per_lane + flag) * sizeof(std::uint64_t);
  }
  // Where the scratch begins: every byte before it starts zero.
  std::size_t zeroed_bytes() const { return (flag_offset(lanes, 0) + 63) / 64 * 64; }
  std::size_t total_bytes() const { return scratch_offset(lanes); }
  WindowSize window_size() const { return {total_bytes(), zeroed_bytes()}; }
  std::size_t scratch_offset(int lane) const { return zeroed_bytes() + static_cast<std::size_t>(lane) * scratch_bytes; }
  // `into` lanes sharing this layout's flags (the zeroed prefix stays as it
  // is), each with a lane's scratch: the window grows by the added lanes'
  // scratch, whose pages take memory only once a collective writes them.
  WindowLayout for_lanes(int into) const {
    WindowLayout divided = *this;
    divided.lanes = into;
    divided.flags_per_lane = flags_per_lane * static_cast<std::size_t>(lanes) / static_cast<std::size_t>(into);
    return divided;
  }
  // The lanes a transport gets (this layout has two): eight where every
  // word travels as a message (Transport::waits_for_messages).
  WindowLayout for_transport(bool waits_for_messages) const {
    return waits_for_messages ? for_lanes(kMessageLanes) : *this;
  }
};

// Flag words hold (sequence << kSignatureBits) | signature. The signature is a
// hash of the collective's arguments, so a peer that called with a different
// count, type, op or algorithm is detected instead of corrupting data.
constexpr int kSignatureBits = 24;
constexpr std::uint64_t kSignatureMask = (std::uint64_t{1} << kSignatureBits) - 1;
inline std::uint64_t flag_value(std::uint64_t sequence, std::uint64_t signature) {
  return (sequence << kSignatureBits) | (signature & kSignatureMask);
}

}  // namespace earlybird
