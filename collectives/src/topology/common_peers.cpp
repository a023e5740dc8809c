#include <earlybird/collectives/peers.hpp>

#include <algorithm>

namespace earlybird::coll {

std::vector<int> common_peers(int rank, int ranks) {
  std::vector<int> peers;
  for (long long distance = 1; distance < ranks; distance *= 2) {
    const auto d = static_cast<int>(distance);
    peers.push_back((rank + d) % ranks);
    peers.push_back(((rank - d) % ranks + ranks) % ranks);
  }
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  std::erase(peers, rank);
  return peers;
}

}  // namespace earlybird::coll
