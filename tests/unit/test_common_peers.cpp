// coll::common_peers, the peers Communicator::warm_up reaches: its shape
// (ascending, no repeats, no self, at most 2 ceil(log2 P)), the examples in
// its header, and that it holds every peer the catalogue's common algorithms
// exchange with — ring, binomial trees and Bruck at every P, the butterflies
// at power-of-two P — read from their projected plans.
#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/partition.hpp>
#include <earlybird/collectives/peers.hpp>
#include <earlybird/collectives/plan.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <set>
#include <string>
#include <vector>

using namespace earlybird::coll;

namespace {

// Every rank a rank's plan of `name` puts to, gets from, notifies or hears from.
std::set<int> plan_peers(Collective collective, const char* name, int ranks, int rank) {
  const Algorithm* algorithm = find_algorithm(collective, name);
  REQUIRE_MESSAGE(algorithm != nullptr, name);
  const RankPlan plan = project(algorithm->make(ranks, 3 * static_cast<std::size_t>(ranks) + 5, {}, 4), rank);
  std::set<int> peers;
  for (const PlanStep& step : plan.steps)
    if (step.peer >= 0) peers.insert(step.peer);
  for (const Notification& note : plan.notes) peers.insert(note.target);
  for (int source : plan.flag_source) peers.insert(source);
  peers.erase(rank);
  return peers;
}

void check_covers(Collective collective, const char* name, int ranks) {
  for (int rank = 0; rank < ranks; ++rank) {
    const std::vector<int> warm = common_peers(rank, ranks);
    for (int peer : plan_peers(collective, name, ranks, rank)) {
      const std::string what = std::string(to_string(collective)) + " " + name + " at P = " + std::to_string(ranks) +
                               ": rank " + std::to_string(rank) + " talks to " + std::to_string(peer);
      CHECK_MESSAGE(std::binary_search(warm.begin(), warm.end(), peer), what);
    }
  }
}

}  // namespace

TEST_CASE("common_peers: ascending, no repeats, no self, in range, O(log P)") {
  for (int ranks = 1; ranks <= 70; ++ranks)
    for (int rank = 0; rank < ranks; ++rank) {
      const std::vector<int> peers = common_peers(rank, ranks);
      CHECK(std::is_sorted(peers.begin(), peers.end()));
      CHECK(std::adjacent_find(peers.begin(), peers.end()) == peers.end());
      CHECK(std::find(peers.begin(), peers.end(), rank) == peers.end());
      for (int peer : peers) CHECK((peer >= 0 && peer < ranks));
      CHECK(peers.size() <= 2 * static_cast<std::size_t>(ceil_log2(ranks)));
    }
}

TEST_CASE("common_peers: examples") {
  CHECK(common_peers(0, 1).empty());
  CHECK(common_peers(0, 2) == std::vector<int>{1});
  CHECK(common_peers(1, 3) == std::vector<int>{0, 2});
  CHECK(common_peers(0, 8) == std::vector<int>{1, 2, 4, 6, 7});
  CHECK(common_peers(5, 12) == std::vector<int>{1, 3, 4, 6, 7, 9});
}

TEST_CASE("common_peers: every peer of ring, binomial trees and Bruck at any P") {
  for (int ranks = 1; ranks <= 33; ++ranks) {
    check_covers(Collective::allreduce, "ring", ranks);
    check_covers(Collective::allreduce, "binomial", ranks);
    check_covers(Collective::allreduce, "reduce_bcast", ranks);
    check_covers(Collective::reduce, "binomial", ranks);
    check_covers(Collective::bcast, "binomial", ranks);
    check_covers(Collective::allgather, "ring", ranks);
    check_covers(Collective::allgather, "bruck", ranks);
    check_covers(Collective::reduce_scatter, "ring", ranks);
  }
}

TEST_CASE("common_peers: every peer of the butterflies at power-of-two P") {
  for (int ranks = 1; ranks <= 64; ranks *= 2) {
    check_covers(Collective::allreduce, "recursive_doubling", ranks);
    check_covers(Collective::allreduce, "rabenseifner", ranks);
    check_covers(Collective::allgather, "recursive_doubling", ranks);
    check_covers(Collective::reduce_scatter, "recursive_halving", ranks);
  }
}
