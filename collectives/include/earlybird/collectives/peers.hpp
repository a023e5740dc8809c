// The peers a rank's collectives most likely talk to, for warming up the
// connections to them before the first collective (Communicator::warm_up).
#pragma once

#include <vector>

namespace earlybird::coll {

// The ranks at distance 2^k (k >= 0, 2^k < ranks) from `rank` either way round
// the ring of `ranks` ranks, ascending, without repeats and without `rank`
// itself (empty when ranks == 1): at most 2 ceil(log2 P) peers. They are every
// peer of the ring algorithms (rank ± 1), of the binomial trees (parent
// rank - lowbit(rank), children rank + 2^j), of Bruck (rank ± 2^k mod P), and
// at power-of-two P of the butterflies (recursive doubling, Rabenseifner,
// recursive halving: rank xor 2^k). At other P a butterfly's fold pairs some
// core ranks that are not a power of two apart; those are not included.
std::vector<int> common_peers(int rank, int ranks);

}  // namespace earlybird::coll
