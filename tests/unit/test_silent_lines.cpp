// SilentLines (runtime/src/exec/silent_role.hpp): ranks that receive nothing
// in a call compare their calls' words in the silent line of the call's
// inline lane. Windows are plain memory here, one per rank, driven from this
// thread, so every interleaving the steps allow can be set up by hand.
#include <doctest/doctest.h>

#include "exec/silent_role.hpp"
#include "rma/window_layout.hpp"

#include <cstdint>
#include <optional>
#include <vector>

using namespace earlybird;

namespace {

constexpr std::uint64_t kSignatureA = 0x1234, kSignatureB = 0x5678;

struct Windows {
  explicit Windows(int ranks) : memory(static_cast<std::size_t>(ranks), std::vector<std::byte>(kLaneBytes)) {
    for (auto& window : memory) pointers.push_back(window.data());
  }
  // One inline lane per window is enough: every call below uses lane 0.
  static constexpr std::size_t kLaneBytes = coll::kInlineLines * coll::kInlineLineBytes;
  // What a rank's own compare stores, without its loads: its store is
  // still on its way when the other rank looks.
  void announce(int rank, std::uint64_t value) {
    store_release(pointers[static_cast<std::size_t>(rank)] + kSilentLineOffset, value);
  }
  std::vector<std::vector<std::byte>> memory;
  std::vector<std::byte*> pointers;
};

void check_found(const std::optional<SilentLines::Disagreement>& found, int peer, std::uint64_t sequence) {
  REQUIRE(found);
  CHECK(found->peer == peer);
  CHECK(found->sequence == sequence);
}

}  // namespace

TEST_CASE("silent ranks with the same call agree, call after call") {
  Windows windows(3);
  std::vector<SilentLines> lines(3);
  for (std::uint64_t sequence : {1, 9, 17})
    for (int rank = 0; rank < 3; ++rank)
      CHECK_FALSE(lines[static_cast<std::size_t>(rank)].compare(windows.pointers, rank, 0, 0,
                                                                flag_value(sequence, kSignatureA)));
}

TEST_CASE("a silent peer that announced another call first is found at once") {
  Windows windows(2);
  SilentLines a;
  windows.announce(1, flag_value(5, kSignatureB));
  check_found(a.compare(windows.pointers, 0, 0, 0, flag_value(5, kSignatureA)), 1, 5);
}

TEST_CASE("stores that crossed are found when the lane is next taken for a silent role") {
  Windows windows(2);
  SilentLines a;
  // Rank 0 looks before rank 1's word of call 5 arrived, then rank 1's lands.
  CHECK_FALSE(a.compare(windows.pointers, 0, 0, 0, flag_value(5, kSignatureA)));
  windows.announce(1, flag_value(5, kSignatureB));
  // Call 13 takes the lane again (the lane guard knew rank 1 finished 5):
  // the earlier disagreement is named with its own call.
  check_found(a.compare(windows.pointers, 0, 0, 0, flag_value(13, kSignatureA)), 1, 5);
}

TEST_CASE("older words and words of agreeing calls are not disagreements") {
  Windows windows(3);
  SilentLines a;
  windows.announce(1, flag_value(3, kSignatureB));   // an older call of rank 1's in this lane
  windows.announce(2, flag_value(11, kSignatureA));  // rank 2 agrees
  CHECK_FALSE(a.compare(windows.pointers, 0, 0, 0, flag_value(11, kSignatureA)));
}

TEST_CASE("a peer's word of a later sequence in the lane is a disagreement") {
  // A matching peer cannot take the lane for 11 + 8 before this rank
  // finished 11: its calls are out of step with this rank's.
  Windows windows(2);
  SilentLines a;
  windows.announce(1, flag_value(19, kSignatureA));
  check_found(a.compare(windows.pointers, 0, 0, 0, flag_value(11, kSignatureA)), 1, 11);
}
