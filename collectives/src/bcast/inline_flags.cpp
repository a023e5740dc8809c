// bcast_inline_flags — for small vectors on one node: the root's vector goes
// straight to every other rank.
//
// Cost (Hockney, m bytes): (P-1)(alpha + beta m) at the root's port in the
// IR; on the inline lines alpha + beta m per rank in one round (the root
// writes once, every rank reads it).
//   root: P-1 puts of count elements; others: a copy out of scratch; rounds 1.
//
// Where every rank's window is directly reachable and m <= 2240 bytes the
// runtime runs this on data-carrying flag lines, every rank reading the
// root's (runtime/src/exec/inline_collective.hpp); elsewhere the schedule
// below.
//
// Limitations: none. Scratch: count per non-root rank.
//
// State for P = 4 (who holds the root's vector):
//   deliver     ranks 1, 2, 3: in scratch, then in their outputs
#include "../schedule/build_schedule.hpp"

#include <earlybird/collectives/bcast.hpp>

namespace earlybird::coll {

Schedule bcast_inline_flags(int ranks, std::size_t count) {
  return detail::build_schedule("bcast_inline_flags", Collective::bcast, ranks, count, [&](Builder& b) {
    const Range all{0, count};
    for (int r = 1; r < ranks; ++r) {
      b.put({0, Buffer::input, all}, {r, Buffer::scratch, all});
      b.copy({r, Buffer::output, all}, {r, Buffer::scratch, all});
    }
    b.copy({0, Buffer::output, all}, {0, Buffer::input, all});  // in place at run time: skipped
  });
}

}  // namespace earlybird::coll
