// The cost model (collectives/src/schedule/predict.cpp) and the choice `auto`
// makes from it (runtime/src/config/algorithm_choice.cpp): predictions equal
// hand-computed values for small cases, the profile file reads back what was
// written and names the line of a bad value, and auto takes the model's
// first choice — which moves from few-round to bandwidth-optimal algorithms
// as a profile's costs move from latency to bandwidth.
#include <doctest/doctest.h>

#include <earlybird/collectives/builder.hpp>
#include <earlybird/collectives/predict.hpp>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/algorithm_choice.hpp"
#include "../common/approx.hpp"

using namespace earlybird::coll;
using earlybird::testing::relative;

namespace {

// The algorithm config::default_algorithm chooses.
template <typename... Args>
std::string chosen(Args... args) {
  return earlybird::config::default_algorithm(args...).algorithm;
}

const Algorithm& allreduce(const char* name) {
  const Algorithm* a = find_algorithm(Collective::allreduce, name);
  REQUIRE(a);
  return *a;
}

std::string written(const std::string& text) {
  const std::string path = "test_predict_profile.txt";
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("predict: hand-computed times") {
  // alpha only: the round count (recursive doubling log2 P, ring 2(P - 1)), plus per_call.
  const LevelCosts latency{CostModel{1.0, 0, 0, 0, 0}, 0.5};
  CHECK(predict(allreduce("recursive_doubling"), 8, 64, 4, latency) == relative(3.5));
  CHECK(predict(allreduce("ring"), 4, 64, 4, latency) == relative(6.5));
  // Recursive doubling at P = 2, 16 floats: a put (alpha + 64 beta) then a
  // reduction of 64 bytes (64 gamma), each also per_step.
  const LevelCosts all{CostModel{1.0, 0.01, 0.02, 0.03, 0.25}, 0};
  CHECK(predict(allreduce("recursive_doubling"), 2, 16, 4, all) ==
        relative(0.25 + 1.0 + 64 * 0.01 + 0.25 + 64 * 0.02));
}

TEST_CASE("predict: the regime past the caches is decided by the largest buffer a rank holds") {
  // From 1 MiB over the ranks, ten times the bytes' cost.
  LevelCosts two{CostModel{1e-6, 1e-10, 1e-10, 1e-10, 0}, 0, MemoryRegime{1 << 20, 1e-9, 1e-9, 1e-9}};
  LevelCosts memory = two;
  memory.memory = {};
  memory.model.beta = memory.model.gamma = memory.model.copy_per_byte = 1e-9;
  // P = 4, blocks of 128 KiB: every rank's output (allgather) or input
  // (reduce-scatter) is 512 KiB, 2 MiB over the ranks.
  for (Collective c : {Collective::allgather, Collective::reduce_scatter}) {
    CAPTURE(to_string(c));
    const Algorithm& ring = *find_algorithm(c, "ring");
    CHECK(collective_of(ring) == c);
    CHECK(predict(ring, 4, 32768, 4, two) == relative(predict(ring, 4, 32768, 4, memory)));
  }
  // An allreduce of 128 KiB (512 KiB over the ranks) stays in the caches.
  const Algorithm& ring = allreduce("ring");
  CHECK(predict(ring, 4, 32768, 4, two) < predict(ring, 4, 32768, 4, memory) / 5);
  const Algorithm stray = ring;
  CHECK_THROWS_AS(collective_of(stray), std::invalid_argument);
}

TEST_CASE("predict_all: fastest first, only what auto may take (no peer reads without the path)") {
  const LevelCosts costs = default_profile().node;
  const auto ranked = predict_all(Collective::allreduce, 4, 1024, 4, /*commutative=*/false, costs);
  REQUIRE(!ranked.empty());
  for (std::size_t i = 1; i < ranked.size(); ++i) CHECK(ranked[i - 1].seconds <= ranked[i].seconds);
  for (const Prediction& p : ranked) {
    const Algorithm* a = find_algorithm(Collective::allreduce, p.algorithm);
    CHECK_FALSE(a->needs_commutative);
    CHECK(a->arrival == ArrivalOrder::none);
    CHECK(a->executor != Executor::peer_reads);
  }
}

TEST_CASE("predict_all: latency-bound profiles pick few rounds, bandwidth-bound ones few bytes") {
  const LevelCosts latency{CostModel{10e-6, 0, 0, 0, 0}, 0};
  const auto few_rounds = predict_all(Collective::allreduce, 16, 1 << 16, 4, true, latency).front();
  CHECK(predict(allreduce(std::string(few_rounds.algorithm).c_str()), 16, 1 << 16, 4, latency) ==
        relative(4 * 10e-6));  // log2 16 rounds: nothing does better
  const LevelCosts bandwidth{CostModel{0, 1e-9, 0, 0, 0}, 0};
  const auto ranked = predict_all(Collective::allreduce, 16, 1 << 20, 4, true, bandwidth);
  // The bandwidth lower bound: 2 (P - 1) / P x m bytes through one port.
  CHECK(ranked.front().seconds <= 2.0 * 15 / 16 * (4 << 20) * 1e-9 * 1.01);
  for (const Prediction& p : ranked)
    if (p.algorithm == "recursive_doubling" || p.algorithm == "linear") CHECK(p.seconds > 2 * ranked.front().seconds);
}

TEST_CASE("segment_candidates: powers of 4 from 16 KiB, 2 to kMostSegments per buffer, never the default") {
  using V = std::vector<std::size_t>;
  const Algorithm& chain = *find_algorithm(Collective::reduce, "chain");  // default 512 KiB
  CHECK(segment_candidates(chain, 1 << 20) == V{16 << 10, 64 << 10, 256 << 10});
  CHECK(segment_candidates(chain, 4 << 20) == V{64 << 10, 256 << 10, 1 << 20});
  CHECK(segment_candidates(chain, 16 << 20) == V{256 << 10, 1 << 20, 4 << 20});
  CHECK(segment_candidates(chain, 32 << 10) == V{16 << 10});
  CHECK(segment_candidates(chain, 16 << 10).empty());  // one segment: the default's schedule
  const Algorithm& segmented = allreduce("segmented_ring");  // default 128 KiB
  CHECK(segment_candidates(segmented, 1 << 20) == V{16 << 10, 64 << 10, 256 << 10});
  CHECK(segment_candidates(allreduce("ring"), 1 << 20).empty());  // not pipelined
}

TEST_CASE("predict_all: a pipelined entry at the fastest of its segments, the default on ties") {
  // Bandwidth-bound, P = 4, 256 KiB: the default 512 KiB segment makes the
  // chain one hop after another; segments overlap them.
  const LevelCosts bandwidth{CostModel{1e-6, 1e-9, 0, 0, 0}, 0};
  const Algorithm& chain = *find_algorithm(Collective::reduce, "chain");
  const std::size_t count = 64 << 10;
  const auto ranked = predict_all(Collective::reduce, 4, count, 4, true, bandwidth);
  const auto found = std::find_if(ranked.begin(), ranked.end(), [](const Prediction& p) { return p.algorithm == "chain"; });
  REQUIRE(found != ranked.end());
  CHECK(found->segment_bytes != 0);
  CHECK(found->seconds == relative(predict(chain, 4, count, 4, bandwidth, found->segment_bytes / 4)));
  CHECK(found->seconds < predict(chain, 4, count, 4, bandwidth) / 2);
  for (std::size_t segment : segment_candidates(chain, count * 4))
    CHECK(found->seconds <= predict(chain, 4, count, 4, bandwidth, segment / 4));
  // Latency-bound: every segment is one more step, so the default stays.
  const LevelCosts latency{CostModel{10e-6, 0, 0, 0, 0}, 0};
  for (const Prediction& p : predict_all(Collective::reduce, 4, count, 4, true, latency)) {
    CAPTURE(p.algorithm);
    CHECK(p.segment_bytes == 0);
  }
  // auto runs the first prediction's segment.
  const MachineProfile& profile = earlybird::config::machine_profile();
  for (Collective c : kCollectives)
    for (std::size_t bytes : {std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{8} << 20}) {
      const auto first = predict_all(c, 4, bytes / 4, 4, true, profile.network).front();
      const auto choice = earlybird::config::default_algorithm(c, bytes, 4, true, false);
      CAPTURE(to_string(c));
      CAPTURE(bytes);
      CHECK(choice.algorithm == first.algorithm);
      CHECK(choice.segment_bytes == first.segment_bytes);
    }
}

TEST_CASE("predict: past memory_from (bytes x ranks) the memory regime's rates apply") {
  LevelCosts costs{CostModel{0, 1e-10, 0, 0, 0}, 0};
  costs.memory = {1 << 20, 3e-10, 0, 0};
  CHECK(costs.model_for(256 << 10, 2).beta == 1e-10);  // 512 KiB on the level
  CHECK(costs.model_for(512 << 10, 2).beta == 3e-10);  // 1 MiB
  CHECK(costs.model_for(64 << 10, 16).beta == 3e-10);
  // beta only, P = 2: recursive doubling moves the whole vector once.
  const Algorithm& rd = allreduce("recursive_doubling");
  CHECK(predict(rd, 2, 1024, 4, costs) == relative(4096 * 1e-10));
  CHECK(predict(rd, 2, 1 << 18, 4, costs) == relative((1 << 20) * 3e-10));
  costs.memory.from_bytes = 0;  // one regime
  CHECK(predict(rd, 2, 1 << 18, 4, costs) == relative((1 << 20) * 1e-10));
}

TEST_CASE("profile file: reads back what it wrote; a bad line is named") {
  MachineProfile profile = default_profile();
  profile.node.model.alpha = 1.25e-6;
  profile.network.model.beta = 3e-9;
  profile.network.per_call = 7e-6;
  profile.node.wake = 4.5e-6;
  profile.node.line_wait = 3.5e-7;
  profile.network.ticket = 2.5e-4;
  profile.network.decision = 1.5e-4;
  profile.node.memory = {4194304, 2.5e-10, 7.5e-11, 6.5e-11};
  profile.node.model.transfers_on_cpu = false;
  profile.network.model.transfers_on_cpu = true;
  profile.network.model.gamma_apart = 2.5e-10;
  profile.node.memory.gamma_apart = 3.5e-10;
  const MachineProfile read = read_profile(written("# calibrated\n" + format_profile(profile)));
  CHECK_FALSE(read.node.model.transfers_on_cpu);
  CHECK(read.network.model.transfers_on_cpu);
  CHECK(read.network.model.gamma_apart == relative(2.5e-10));
  CHECK(read.node.memory.gamma_apart == relative(3.5e-10));
  CHECK(read.node.model_for(std::size_t{1} << 22, 2).gamma_apart == relative(3.5e-10));  // past the caches
  CHECK(read.node.model_for(1024, 2).gamma_apart == relative(profile.node.model.reduce_cost(true)));
  CHECK(default_profile().node.model.transfers_on_cpu);  // a node's puts are copies on the rank's core
  CHECK_FALSE(default_profile().network.model.transfers_on_cpu);
  CHECK(read.node.model.alpha == relative(1.25e-6));
  CHECK(read.network.model.beta == relative(3e-9));
  CHECK(read.network.per_call == relative(7e-6));
  CHECK(read.node.wake == relative(4.5e-6));
  CHECK(read.node.line_wait == relative(3.5e-7));
  CHECK(read.network.ticket == relative(2.5e-4));
  CHECK(read.network.decision == relative(1.5e-4));
  CHECK(read.node.model.gamma == relative(profile.node.model.gamma));
  CHECK(read.node.memory.from_bytes == relative(4194304, 1e-3));  // written to 4 digits
  CHECK(read.node.memory.beta == relative(2.5e-10));
  CHECK(read.node.memory.gamma == relative(7.5e-11));
  CHECK(read.node.memory.copy == relative(6.5e-11));
  CHECK(read.network.memory.from_bytes == 0);

  const MachineProfile partial = read_profile(written("node.per_step = 1e-6  # the rest: defaults\n"));
  CHECK(partial.node.model.per_step == relative(1e-6));
  CHECK(partial.network.model.alpha == relative(default_profile().network.model.alpha));

  auto message = [](const std::string& text) {
    try {
      read_profile(written(text));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message("node.alpha = 1e-6\nnode.beta = fast\n").find("line 2: 'fast' is not a non-negative number") !=
        std::string::npos);
  CHECK(message("core.alpha = 1\n").find("line 1: unknown level 'core'") != std::string::npos);
  CHECK(message("node.delta = 1\n").find("unknown key 'delta'") != std::string::npos);
  CHECK(message("node.alpha = -1\n").find("not a non-negative number") != std::string::npos);
  CHECK(message("node.alpha 1\n").find("expected level.key = value") != std::string::npos);
  CHECK(message("node.transfers_on_cpu = yes\n").find("line 1: transfers_on_cpu is 0 or 1, not 'yes'") !=
        std::string::npos);
  std::remove("test_predict_profile.txt");
  CHECK_THROWS_AS(read_profile("test_predict_profile.txt"), std::invalid_argument);
}

TEST_CASE("auto: the model's first choice for the call's size class") {
  const MachineProfile& profile = earlybird::config::machine_profile();  // no EARLYBIRD_PROFILE here: defaults
  for (bool direct : {false, true})
    for (int ranks : {2, 3, 4, 8})
      for (std::size_t bytes : {std::size_t{2000}, std::size_t{4096}, std::size_t{65536 + 4}, std::size_t{3 << 20}}) {
        const std::size_t class_bytes = std::bit_ceil(bytes);
        // Directly reached windows offer the inline lines where the class fits them.
        const bool fits_lines = bytes <= inline_limit(Collective::allreduce, ranks);
        const DirectPaths paths{direct && fits_lines, false};
        const auto ranked = predict_all(Collective::allreduce, ranks, class_bytes / 4, 4, true,
                                        direct ? profile.node : profile.network, paths);
        CAPTURE(ranks);
        CAPTURE(bytes);
        CHECK(chosen(Collective::allreduce, bytes, ranks, true, direct) == ranked.front().algorithm);
      }
  // Classes under 4 bytes are one element of their size, not 0 floats.
  for (std::size_t bytes : {std::size_t{1}, std::size_t{2}}) {
    const auto ranked = predict_all(Collective::allreduce, 64, 1, bytes, true, profile.network);
    CAPTURE(bytes);
    CHECK(ranked.front().seconds > 0);
    CHECK(chosen(Collective::allreduce, bytes, 64, true, false) == ranked.front().algorithm);
  }
  // Every collective gets an algorithm that suits a non-commutative operator
  // (reduce-scatter's only one is inline_flags, whose schedule folds in rank
  // order: until 2026-11-27 auto left it out past the lines and such a call
  // failed).
  CHECK(chosen(Collective::reduce_scatter, 1 << 20, 5, false, false) == "inline_flags");
  for (Collective c : kCollectives) {
    const std::string name = chosen(c, 1 << 20, 5, false, false);
    const Algorithm* a = find_algorithm(c, name);
    REQUIRE(a);
    CHECK_FALSE(a->needs_commutative);
  }
  // A communicator beyond kModelRanks takes the choice made for kModelRanks.
  CHECK(chosen(Collective::allreduce, 1 << 20, 1000, true) ==
        chosen(Collective::allreduce, 1 << 20, earlybird::config::kModelRanks, true));
}

TEST_CASE("auto_pap's stand-in: auto's choice where its predicted time is within the arrival board's cost") {
  const MachineProfile& profile = earlybird::config::machine_profile();  // defaults: both levels have a ticket cost
  auto arrival_stand_in = [](auto... args) {
    return earlybird::config::arrival_stand_in(allreduce("auto_pap"), args...);
  };
  for (bool direct : {false, true})
    for (int ranks : {2, 3, 4, 8}) {
      bool board_paid = false;
      for (std::size_t bytes = 8; bytes <= std::size_t{64} << 20; bytes *= 4) {
        CAPTURE(direct);
        CAPTURE(ranks);
        CAPTURE(bytes);
        const auto stand_in = arrival_stand_in(Collective::allreduce, bytes, ranks, true, direct);
        if (stand_in) CHECK(stand_in->algorithm == chosen(Collective::allreduce, bytes, ranks, true, direct));
        // Past the inline lines the class is bit_ceil(bytes) floats: the
        // boundary is the model's fastest against the level's ticket.
        if (bytes >= 4096) {
          const LevelCosts& level = direct ? profile.node : profile.network;
          const auto ranked = predict_all(Collective::allreduce, ranks, bytes / 4, 4, true, level);
          CHECK(stand_in.has_value() == (ranked.front().seconds <= board_cost(allreduce("auto_pap"), level)));
        }
        // Larger calls never return to the stand-in once the board pays.
        if (board_paid) CHECK_FALSE(stand_in);
        board_paid = board_paid || !stand_in;
      }
      CHECK(board_paid);  // 64 MiB always takes the board
    }
  // A tiny call across nodes (network ticket: the board's round trips to
  // rank 0) never takes it; nor one rank, nor no data.
  CHECK(arrival_stand_in(Collective::allreduce, 8, 2, true, false));
  CHECK(arrival_stand_in(Collective::allreduce, 8, 2, false, false));
  CHECK_FALSE(arrival_stand_in(Collective::allreduce, 8, 1, true, false));
  CHECK_FALSE(arrival_stand_in(Collective::allreduce, 0, 4, true, false));
}

TEST_CASE("fastest_schedule: the model's fastest allreduce that runs a plan, the ring without data") {
  using earlybird::config::fastest_schedule;
  const MachineProfile& profile = earlybird::config::machine_profile();
  for (bool direct : {false, true})
    for (int ranks : {2, 3, 4, 8})
      for (std::size_t bytes : {std::size_t{8192}, std::size_t{65536}, std::size_t{4} << 20}) {
        CAPTURE(direct);
        CAPTURE(ranks);
        CAPTURE(bytes);
        const Algorithm& got = fastest_schedule(bytes, ranks, direct);
        CHECK(got.executor == Executor::steps);
        CHECK(got.arrival == ArrivalOrder::none);
        // Past the inline lines and without peer reads every candidate runs a
        // plan: the model's first choice.
        const auto ranked = predict_all(Collective::allreduce, ranks, bytes / 4, 4, true,
                                        direct ? profile.node : profile.network);
        CHECK(got.name == ranked.front().algorithm);
      }
  // Where the inline lines win, the fastest entry that runs a plan instead.
  CHECK(chosen(Collective::allreduce, 8, 2, true, true) == "inline_flags");
  const Algorithm& tiny = fastest_schedule(8, 2, true);
  CHECK(tiny.executor == Executor::steps);
  CHECK(tiny.name != "inline_flags");
  CHECK(fastest_schedule(0, 4).name == "ring");
  CHECK(fastest_schedule(8, 1).name == "ring");
}

// Round numbers: a call 1 us, a line 0.1 us, gamma 1e-10 s/B.
LevelCosts inline_costs() {
  LevelCosts costs{CostModel{1e-6, 0, 1e-10, 1e-10, 0}, 5e-7};
  costs.inline_call = 1e-6;
  costs.inline_line = 1e-7;
  return costs;
}

TEST_CASE("inline_flags' prediction: the call, the line transfers the slowest rank takes part in, its folds") {
  const LevelCosts costs = inline_costs();
  // allreduce, P = 4, 100 B: 2 lines from each of 3 peers and 2 of its own
  // to each, 300 B folded.
  CHECK(predict_inline_lines(Collective::allreduce, 4, 25, 4, costs) == relative(1e-6 + 12e-7 + 300e-10, 1e-12));
  // reduce: the root reads 2 lines of each of 3 peers, and nobody reads its.
  CHECK(predict_inline_lines(Collective::reduce, 4, 25, 4, costs) == relative(1e-6 + 6e-7 + 300e-10, 1e-12));
  // reduce-scatter, P = 3, blocks of 56 B: of each peer the word's line and
  // one of the block's, as many to each.
  CHECK(predict_inline_lines(Collective::reduce_scatter, 3, 14, 4, costs) == relative(1e-6 + 8e-7 + 112e-10, 1e-12));
  // allgather places (8 lines each way per peer); bcast's root is read by 7.
  CHECK(predict_inline_lines(Collective::allgather, 4, 112, 4, costs) == relative(1e-6 + 48e-7, 1e-12));
  CHECK(predict_inline_lines(Collective::bcast, 8, 112, 4, costs) == relative(1e-6 + 56e-7, 1e-12));
  CHECK(predict_inline_lines(Collective::bcast, 2, 112, 4, costs) == relative(1e-6 + 8e-7, 1e-12));
  CHECK(predict_inline_lines(Collective::allreduce, 1, 112, 4, costs) == costs.inline_call);
  // 4 ranks on 2 cores. allgather: every rank reads (and places its own
  // block), so the work twice; its
  // four waits served two at a time, two wakes.
  LevelCosts shared = costs;
  shared.model.cores = 2;
  shared.wake = 1e-5;
  CHECK(predict_inline_lines(Collective::allgather, 4, 14, 4, shared) == relative(1e-6 + 2e-5 + 2 * 6e-7, 1e-12));
  // reduce: the root alone reads and waits: its work once, one wake.
  CHECK(predict_inline_lines(Collective::reduce, 4, 25, 4, shared) == relative(1e-6 + 1e-5 + 6e-7 + 300e-10, 1e-12));
  // bcast: three readers on two cores, the work 1.5 times; their three
  // waits 1.5 wakes.
  CHECK(predict_inline_lines(Collective::bcast, 4, 112, 4, shared) == relative(1e-6 + 1.5e-5 + 1.5 * 24e-7, 1e-12));
}

TEST_CASE("inline_flags: on the lines where the call fits them and they were measured, else priced by its schedule") {
  const auto inline_flags = [](const std::vector<Prediction>& ranked) {
    const auto found = std::find_if(ranked.begin(), ranked.end(), [](const Prediction& p) { return p.algorithm == "inline_flags"; });
    return found == ranked.end() ? -1.0 : found->seconds;
  };
  LevelCosts costs = inline_costs();
  for (Collective c : kCollectives) {
    CAPTURE(to_string(c));
    const Algorithm* entry = find_algorithm(c, "inline_flags");
    REQUIRE(entry);
    const std::size_t most = inline_limit(c, 4);
    CHECK(inline_flags(predict_all(c, 4, most / 4, 4, true, costs, {.inline_lines = true})) ==
          relative(predict_inline_lines(c, 4, most / 4, 4, costs)));
    // Past the lines, or without them, its schedule runs: priced as such.
    CHECK(inline_flags(predict_all(c, 4, most / 4 + 1, 4, true, costs, {.inline_lines = true})) ==
          relative(predict(*entry, 4, most / 4 + 1, 4, costs)));
    CHECK(inline_flags(predict_all(c, 4, most / 4, 4, true, costs, {})) == relative(predict(*entry, 4, most / 4, 4, costs)));
  }
  // Non-commutative operators too: the lines fold in rank order.
  CHECK(inline_flags(predict_all(Collective::allreduce, 4, 2, 4, false, costs, {.inline_lines = true})) > 0);
  // Cheap lines win a tiny allreduce, costly ones lose it; none measured: left out.
  CHECK(predict_all(Collective::allreduce, 8, 2, 4, true, costs, {.inline_lines = true}).front().algorithm ==
        "inline_flags");
  costs.inline_line = 1e-4;
  CHECK(predict_all(Collective::allreduce, 8, 2, 4, true, costs, {.inline_lines = true}).front().algorithm !=
        "inline_flags");
  // Lines not measured here: a call that would run on them is left out.
  costs.inline_call = 0;
  costs.inline_line = 1e-9;
  CHECK(inline_flags(predict_all(Collective::allreduce, 8, 2, 4, true, costs, {.inline_lines = true})) < 0);
  // predict_entry prices the entry by what runs: its schedule where the lines are not there.
  const Algorithm& entry = allreduce("inline_flags");
  CHECK(predict_entry(Collective::allreduce, entry, 8, 2, 4, costs, {.inline_lines = true}) ==
        relative(predict_inline_lines(Collective::allreduce, 8, 2, 4, costs)));
  CHECK(predict_entry(Collective::allreduce, entry, 8, 2, 4, costs) == relative(predict(entry, 8, 2, 4, costs)));
}

TEST_CASE("predict_entry: an arrival-ordered entry pays the board's ticket beyond its schedule, a decided one its "
          "decision too, no other entry either") {
  LevelCosts costs{CostModel{1e-6, 1e-9, 1e-10, 1e-10, 0}, 2e-6};
  costs.ticket = 3e-5;
  costs.decision = 2e-5;
  for (const char* name : {"arrival_chain", "arrival_prr", "arrival_greedy"}) {
    CAPTURE(name);
    const Algorithm& a = allreduce(name);
    CHECK(predict_entry(Collective::allreduce, a, 4, 1000, 4, costs) == relative(predict(a, 4, 1000, 4, costs) + 3e-5));
  }
  for (const char* name : {"sorted_linear_tree", "pre_reduced_ring", "auto_pap"}) {
    CAPTURE(name);
    const Algorithm& a = allreduce(name);
    CHECK(board_cost(a, costs) == relative(5e-5));
    CHECK(predict_entry(Collective::allreduce, a, 4, 1000, 4, costs) == relative(predict(a, 4, 1000, 4, costs) + 5e-5));
  }
  const Algorithm& ring = allreduce("ring");
  CHECK(predict_entry(Collective::allreduce, ring, 4, 1000, 4, costs) == predict(ring, 4, 1000, 4, costs));
}

TEST_CASE("auto on a direct communicator: a call that fits the inline lines is a class of its own") {
  const MachineProfile& profile = earlybird::config::machine_profile();  // defaults: an inline cost for the node
  REQUIRE(profile.node.inline_call > 0);
  for (Collective c : kCollectives)
    for (int ranks : {2, 3, 4, 16}) {
      CAPTURE(to_string(c));
      CAPTURE(ranks);
      const std::size_t most = inline_limit(c, ranks);
      for (std::size_t bytes : {std::size_t{8}, most, most + 1}) {
        if (bytes == 0) continue;
        CAPTURE(bytes);
        // The class: a power of two, or the most that fits where the power does not.
        const bool fits = bytes <= most;
        const std::size_t class_bytes = fits ? std::min(std::bit_ceil(bytes), most) : std::bit_ceil(bytes);
        const std::size_t elem = std::min<std::size_t>(class_bytes, 4);
        const auto ranked = predict_all(c, ranks, class_bytes / elem, elem, true, profile.node, {.inline_lines = fits});
        CHECK(chosen(c, bytes, ranks, true, true) == ranked.front().algorithm);
        // Elsewhere (past the lines, across nodes) inline_flags is priced by
        // its schedule like every entry.
        const std::size_t network_class = std::bit_ceil(bytes), network_elem = std::min<std::size_t>(network_class, 4);
        CHECK(chosen(c, bytes, ranks, true, false) ==
              predict_all(c, ranks, network_class / network_elem, network_elem, true, profile.network).front().algorithm);
      }
    }
  // The defaults (this VM, P = 2): the lines win every collective's 8 bytes at P = 2.
  for (Collective c : kCollectives) CHECK(chosen(c, 8, 2, true, true) == "inline_flags");
}

// P = 6 over nodes of 3 is decided nowhere else in this program.
TEST_CASE("decide_ahead: the same choices as deciding at first use, and the verbose log still comes once") {
  const MachineProfile& profile = earlybird::config::machine_profile();
  const std::size_t before = earlybird::config::rankings_made();
  earlybird::config::decide_ahead(6, false, 3, 0, false);
  const std::size_t ahead = earlybird::config::rankings_made();
  // 5 collectives, 3 of them also non-commutative, 27 classes (1 B-64 MiB).
  CHECK(ahead - before == 8 * 27);
  for (Collective c : kCollectives)
    for (std::size_t bytes : {std::size_t{8}, std::size_t{5000}, std::size_t{1} << 20}) {
      CAPTURE(to_string(c));
      CAPTURE(bytes);
      const auto ranked = predict_all(c, 6, std::bit_ceil(bytes) / 4, 4, true, spanning_nodes(profile, 3));
      std::string explanation;
      CHECK(chosen(c, bytes, 6, true, false, 3, &explanation) == ranked.front().algorithm);
      CHECK(explanation.find(std::string(ranked.front().algorithm)) != std::string::npos);
      explanation.clear();
      chosen(c, bytes, 6, true, false, 3, &explanation);
      CHECK(explanation.empty());
    }
  CHECK(earlybird::config::rankings_made() == ahead);  // every class above was decided ahead
  // A direct communicator (P = 7, decided nowhere else): the classes that fit
  // the inline lines too.
  earlybird::config::decide_ahead(7, true, 0, 0, false);
  const std::size_t direct = earlybird::config::rankings_made();
  for (Collective c : kCollectives)
    for (std::size_t bytes : {std::size_t{3}, std::size_t{60}, inline_limit(c, 7),
                              kInlineLinesBytes, std::size_t{5000}}) {
      CAPTURE(to_string(c));
      CAPTURE(bytes);
      chosen(c, bytes, 7, true, true);
    }
  CHECK(earlybird::config::rankings_made() == direct);
}

// Costs with round numbers: alpha 1 us, gamma = copy = 1e-10 s/B, per_call
// 0.5 us; a byte read 2e-10 s, 1 us per read system call, 0.5 us per flag
// line waited on (not alpha: the waits are loads).
LevelCosts reading_costs() {
  LevelCosts costs{CostModel{1e-6, 0, 1e-10, 1e-10, 0}, 5e-7};
  costs.peer_read = 2e-10;
  costs.read_call = 1e-6;
  costs.line_wait = 5e-7;
  return costs;
}

TEST_CASE("peer_reads' prediction: each rank's reads, folds, system calls and waits, an owner's buffer read in turn") {
  const LevelCosts costs = reading_costs();
  // allreduce, P = 4, 16 KiB: slices of 4 KiB; reads 2 x 3 slices (24576 B)
  // at 2e-10, folds 3 slices at 1e-10, 3 x (1 chunk + 1) calls, 3 waits
  // at 0.5 us.
  CHECK(predict_peer_reads(Collective::allreduce, 4, 4096, 4, costs) ==
        relative(5e-7 + 1.5e-6 + 24576 * 2e-10 + 12288 * 1e-10 + 6e-6, 1e-12));
  // bcast, P = 4, 16 KiB: the root's buffer is read 3 times in turn.
  CHECK(predict_peer_reads(Collective::bcast, 4, 4096, 4, costs) ==
        relative(5e-7 + 1e-6 + 49152 * 2e-10 + 1e-6, 1e-12));
  // reduce_scatter, P = 3, blocks of 256 KiB: 2 peers' blocks, 2 chunks each.
  CHECK(predict_peer_reads(Collective::reduce_scatter, 3, 65536, 4, costs) ==
        relative(5e-7 + 1e-6 + 2 * 262144 * (2e-10 + 1e-10) + 4e-6, 1e-12));
  // allgather and reduce, P = 2, 1 KiB: the allgather also copies its own
  // block into its output (1 KiB at copy 1e-10).
  CHECK(predict_peer_reads(Collective::allgather, 2, 256, 4, costs) ==
        relative(5e-7 + 1e-6 + 1024 * 2e-10 + 1024 * 1e-10 + 1e-6, 1e-12));
  CHECK(predict_peer_reads(Collective::reduce, 2, 256, 4, costs) == relative(5e-7 + 1e-6 + 1024 * 3e-10 + 1e-6, 1e-12));
  CHECK(predict_peer_reads(Collective::allreduce, 1, 4096, 4, costs) == costs.per_call);
  // 4 ranks on 2 cores. allgather: every rank reads (and places its own
  // block), so the work twice;
  // each rank waits twice (its owners' line 0, its readers' line 2), eight
  // waits served two at a time: four wakes.
  LevelCosts shared = costs;
  shared.model.cores = 2;
  shared.wake = 1e-5;
  CHECK(predict_peer_reads(Collective::allgather, 4, 256, 4, shared) ==
        relative(5e-7 + 1e-6 + 4e-5 + 2 * (3 * 1024 * 2e-10 + 1024 * 1e-10 + 3e-6), 1e-12));
  // reduce: the root alone reads (its work once); the root's one wait and
  // each non-root's, a chain of two: two wakes.
  CHECK(predict_peer_reads(Collective::reduce, 4, 256, 4, shared) ==
        relative(5e-7 + 1e-6 + 2e-5 + 3 * 1024 * 3e-10 + 3e-6, 1e-12));
  // bcast: three readers on two cores, the root's buffer read three times
  // (the work 1.5 times that); four waits, two wakes.
  CHECK(predict_peer_reads(Collective::bcast, 4, 256, 4, shared) ==
        relative(5e-7 + 1e-6 + 2e-5 + 1.5 * (3 * 1024 * 2e-10 + 1e-6), 1e-12));
}

TEST_CASE("peer_reads' prediction over mapped buffers: folds at gamma_apart, the rest at copy, no system call") {
  LevelCosts costs = reading_costs();
  costs.model.copy_per_byte = 0.5e-10;
  costs.model.gamma_apart = 1.5e-10;
  // allreduce, P = 4, 16 KiB: 3 slices of 4 KiB folded, 3 more placed; 3 waits.
  CHECK(predict_peer_reads(Collective::allreduce, 4, 4096, 4, costs, true) ==
        relative(5e-7 + 1.5e-6 + 12288 * 1.5e-10 + 12288 * 0.5e-10, 1e-12));
  // bcast, P = 4, 16 KiB: the root's buffer served 3 times, nothing folded.
  CHECK(predict_peer_reads(Collective::bcast, 4, 4096, 4, costs, true) == relative(5e-7 + 1e-6 + 49152 * 0.5e-10, 1e-12));
  // reduce, P = 2, 1 KiB: all folded.
  CHECK(predict_peer_reads(Collective::reduce, 2, 256, 4, costs, true) == relative(5e-7 + 1e-6 + 1024 * 1.5e-10, 1e-12));
  // Loads cost less than the system calls for every collective.
  for (Collective c : kCollectives) {
    CAPTURE(to_string(c));
    CHECK(predict_peer_reads(c, 4, 1 << 18, 4, costs, true) < predict_peer_reads(c, 4, 1 << 18, 4, costs));
  }
}

TEST_CASE("shared buffers make peer_reads auto's choice where loads win and the system calls lose") {
  LevelCosts costs = reading_costs();
  costs.model.beta = 1e-9;  // a transfer through the window costs
  costs.peer_read = 1e-8;   // system calls far too slow to win
  for (Collective c : {Collective::allreduce, Collective::reduce_scatter}) {
    CAPTURE(to_string(c));
    CHECK(predict_all(c, 4, 1 << 20, 4, true, costs, {.peer_reads = true}).front().algorithm != "peer_reads");
    CHECK(predict_all(c, 4, 1 << 20, 4, true, costs, {.peer_reads = true, .peers_mapped = true}).front().algorithm ==
          "peer_reads");
  }
  // The hint counts only where the ranks read each other at all.
  CHECK(predict_all(Collective::allreduce, 4, 1 << 20, 4, true, costs, {.peers_mapped = true}).front().algorithm !=
        "peer_reads");
}

TEST_CASE("peer_reads is a candidate only where the ranks read each other and the level has a read cost") {
  const auto has_peer_reads = [](const std::vector<Prediction>& ranked) {
    return std::any_of(ranked.begin(), ranked.end(), [](const Prediction& p) { return p.algorithm == "peer_reads"; });
  };
  LevelCosts costs = reading_costs();
  for (Collective c : kCollectives) {
    CAPTURE(to_string(c));
    CHECK(has_peer_reads(predict_all(c, 4, 1 << 18, 4, true, costs, {.peer_reads = true})));
    CHECK_FALSE(has_peer_reads(predict_all(c, 4, 1 << 18, 4, true, costs, {})));
  }
  costs.peer_read = 0;
  CHECK_FALSE(has_peer_reads(predict_all(Collective::allreduce, 4, 1 << 18, 4, true, costs, {.peer_reads = true})));
  // Free reads win a large allreduce; costly ones lose it.
  costs.peer_read = 1e-13;
  CHECK(predict_all(Collective::allreduce, 8, 1 << 20, 4, true, costs, {.peer_reads = true}).front().algorithm == "peer_reads");
  costs.peer_read = 1e-8;
  CHECK(predict_all(Collective::allreduce, 8, 1 << 20, 4, true, costs, {.peer_reads = true}).front().algorithm != "peer_reads");
}

TEST_CASE("auto takes the model's first choice with peer_reads among the candidates, never where ranks cannot read") {
  const MachineProfile& profile = earlybird::config::machine_profile();  // defaults: a read cost for the node
  REQUIRE(profile.node.peer_read > 0);
  for (Collective c : kCollectives)
    for (int ranks : {2, 4})
      for (std::size_t bytes : {std::size_t{4096}, std::size_t{1} << 16, std::size_t{1} << 20, std::size_t{16} << 20}) {
        CAPTURE(to_string(c));
        CAPTURE(ranks);
        CAPTURE(bytes);
        const auto ranked = predict_all(c, ranks, bytes / 4, 4, true, profile.node, {.peer_reads = true});
        CHECK(chosen(c, bytes, ranks, true, true, 0, nullptr, 0, true) == ranked.front().algorithm);
        CHECK(chosen(c, bytes, ranks, true, true, 0, nullptr, 0, false) != "peer_reads");
        CHECK(chosen(c, bytes, ranks, true, false, 0, nullptr, 0, true) != "peer_reads");
      }
}

TEST_CASE("auto on a node whose ranks outnumber its cores: the model with the cores shared") {
  using earlybird::config::shared_cores;
  CHECK(shared_cores(4, 2) == 2);
  CHECK(shared_cores(2, 2) == 0);
  LevelCosts node = earlybird::config::machine_profile().node;  // defaults
  node.model.cores = 2;
  // Classes past the inline lines (which take up to 2240 bytes).
  for (std::size_t bytes : {std::size_t{4096}, std::size_t{32768}, std::size_t{1 << 20}}) {
    CAPTURE(bytes);
    const auto ranked = predict_all(Collective::allreduce, 4, bytes / 4, 4, true, node);
    CHECK(chosen(Collective::allreduce, bytes, 4, true, true, 0, nullptr, 2) == ranked.front().algorithm);
  }
  // Each prediction: the simulation with the ranks taking turns on the
  // cores, plus a wake per wait on another rank, two at a time (the cores),
  // never fewer than the longest chain of them.
  for (const char* name : {"ring", "recursive_doubling", "binomial", "linear"})
    for (std::size_t count : {std::size_t{16}, std::size_t{1} << 16, std::size_t{1} << 21}) {
      CAPTURE(name);
      CAPTURE(count);
      const Algorithm& a = *find_algorithm(Collective::allreduce, name);
      const std::size_t simulated = std::min(count, kSimulatedCount);
      const double scale = static_cast<double>(count) / static_cast<double>(simulated);
      const Schedule schedule = a.make(4, simulated, {}, 4);
      CostModel shrunk = node.model_for(count * 4, 4);  // the copy shrunk `scale` times, latencies too
      shrunk.alpha /= scale;
      shrunk.per_step /= scale;
      const double turns = simulate(schedule, 4, shrunk).time * scale;
      const WaitsOnOthers waits = waits_on_other_ranks(schedule);
      const double wakes = std::max<double>(waits.longest, waits.total / 2.0);
      CHECK(predict(a, 4, count, 4, node) == relative(turns + wakes * node.wake + node.per_call, 1e-9));
    }
  // The waits, not the steps, are charged: at 4 KiB a gather to one rank and
  // a broadcast back (four wakes, two in a chain) beats a binomial reduce and
  // broadcast (four in a chain), as measured on this VM at P = 4
  // (docs/benchmarks.md, "Ranks sharing cores").
  CHECK(predict(*find_algorithm(Collective::allreduce, "linear"), 4, 1024, 4, node) <
        predict(*find_algorithm(Collective::allreduce, "binomial"), 4, 1024, 4, node));
}

TEST_CASE("auto over nodes: the two-level model's choice, hierarchical where the node layout is not a power of two") {
  const MachineProfile& profile = earlybird::config::machine_profile();  // defaults
  for (auto [ranks, per_node] : {std::pair{4, 2}, {6, 2}, {12, 4}, {24, 4}})
    for (std::size_t bytes : {std::size_t{8}, std::size_t{65536}, std::size_t{16 << 20}}) {
      CAPTURE(ranks);
      CAPTURE(bytes);
      const auto ranked = predict_all(Collective::allreduce, ranks, bytes / 4, 4, true, spanning_nodes(profile, per_node));
      CHECK(chosen(Collective::allreduce, bytes, ranks, true, false, per_node) == ranked.front().algorithm);
    }
  // Three nodes of four at 64 KiB: the node phases keep two thirds of the
  // flat algorithms' network bytes off the nodes' links (simulated 623 us
  // against the ring's 1076 us and Rabenseifner's 1340 us).
  CHECK(chosen(Collective::allreduce, 65536, 12, true, false, 4) == "hierarchical");
  // A layout that does not divide the modelled ranks falls back to one level.
  CHECK(chosen(Collective::allreduce, 1 << 20, 99, true, false, 3) ==
        chosen(Collective::allreduce, 1 << 20, 99, true, false, 0));
}

TEST_CASE("predict: the hierarchical entry sees the model's node layout") {
  const LevelCosts costs = spanning_nodes(default_profile(), 2);
  CHECK(costs.model.node_ranks == 2);
  CHECK(costs.model.node_alpha == default_profile().node.model.alpha);
  CHECK(costs.model.alpha == default_profile().network.model.alpha);
  const Algorithm& h = allreduce("hierarchical");
  AlgorithmParams params;
  params.node_ranks = 2;
  CHECK(predict(h, 6, 1000, 4, costs) ==
        relative(simulate(h.make(6, 1000, params, 4), 4, costs.model).time + costs.per_call));
}

TEST_CASE("predict: counts past kSimulatedCount are extrapolated in proportion, close to their whole simulation") {
  const LevelCosts costs{CostModel{2e-6, 1e-9, 5e-11, 4e-11, 1e-7}, 1e-6};
  // The pipelines too, whose fill is a large part of their time at
  // kSimulatedCount (segments shrunk with the count).
  for (const auto& [collective, name] : {std::pair{Collective::allreduce, "ring"},
                                        {Collective::allreduce, "rabenseifner"},
                                        {Collective::allreduce, "recursive_doubling"},
                                        {Collective::allreduce, "segmented_ring"},
                                        {Collective::reduce, "chain"},
                                        {Collective::reduce, "binary_tree"},
                                        {Collective::bcast, "chain"},
                                        {Collective::allreduce, "chain"}}) {
    CAPTURE(name);
    CAPTURE(to_string(collective));
    const Algorithm& a = *find_algorithm(collective, name);
    const std::size_t count = 4 * kSimulatedCount + 12;
    const double simulated =
        simulate(a.make(8, count, AlgorithmParams{}, 4), 4, costs.model).time + costs.per_call;
    CHECK(predict(a, 8, count, 4, costs) == relative(simulated, 0.01));
    CHECK(predict(a, 8, kSimulatedCount, 4, costs) ==
          relative(simulate(a.make(8, kSimulatedCount, AlgorithmParams{}, 4), 4, costs.model).time +
                          costs.per_call));
  }
}
