// allgather_inline_flags — for small blocks on one node: every rank's block
// goes straight to every other rank.
//
// Cost (Hockney, m bytes per block): alpha + (P-1) beta m per rank in one
// round.
//   every rank: P-1 puts of count elements, P-1 copies out of scratch;
//   rounds 1.
//
// Where every rank's window is directly reachable and m <= 2240 bytes the
// runtime runs this on data-carrying flag lines, every rank reading every
// rank's (runtime/src/exec/inline_collective.hpp); elsewhere the schedule
// below (puts into scratch slot k: schedule/published.hpp).
//
// Limitations: none. Scratch: P count per rank.
//
// State for P = 4 (blocks in each output):
//   own         every rank: its block, from its input
//   deliver     every rank: the other three, into scratch, then the output
#include "../schedule/build_schedule.hpp"
#include "../schedule/published.hpp"

#include <earlybird/collectives/allgather.hpp>

namespace earlybird::coll {

Schedule allgather_inline_flags(int ranks, std::size_t count) {
  return detail::build_schedule("allgather_inline_flags", Collective::allgather, ranks, count, [&](Builder& b) {
    auto block = [&](int rank, int k) { return Slot{rank, Buffer::output, {static_cast<std::size_t>(k) * count, count}}; };
    for (int r = 0; r < ranks; ++r) b.copy(block(r, r), {r, Buffer::input, {0, count}});
    for (int from = 0; from < ranks; ++from)
      for (int reader = 0; reader < ranks; ++reader) {
        if (reader == from) continue;
        b.put({from, Buffer::input, {0, count}}, detail::landing(reader, from, count));
        b.copy(block(reader, from), detail::landing(reader, from, count));
      }
  });
}

}  // namespace earlybird::coll
