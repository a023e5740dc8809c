// The schedule simulator (collectives/src/schedule/simulate.cpp): hand-made
// schedules with hand-computed times (a transfer then a reduction, a busy
// out port, a late rank), and catalogue schedules checked against what their
// cost formulas say: alpha only gives the round count, beta only the ring's
// 2(P-1)/P * m.
#include <doctest/doctest.h>

#include <earlybird/collectives/builder.hpp>
#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/simulate.hpp>

#include <string>
#include <vector>

using namespace earlybird::coll;

namespace {

Slot slot(int rank, Buffer buffer, std::size_t count) { return Slot{rank, buffer, Range{0, count}}; }

// Rank 0 puts 4 elements into rank 1's scratch; rank 1 reduces them into its output.
Schedule put_then_reduce() {
  Builder b("put_then_reduce", 2, 4);
  b.put(slot(0, Buffer::input, 4), slot(1, Buffer::scratch, 4));
  b.reduce(slot(1, Buffer::output, 4), slot(1, Buffer::input, 4), slot(1, Buffer::scratch, 4));
  return std::move(b).finish();
}

const CostModel kModel{1.0, 0.5, 0.25};  // with 8-byte elements: put 1 + 16 = 17, reduce 8

std::vector<std::string> reasons(const Simulation& sim) {
  std::vector<std::string> out;
  for (const CriticalStep& s : sim.critical_path) out.emplace_back(s.waited_for);
  return out;
}

}  // namespace

TEST_CASE("simulate: a put then a reduction, by hand") {
  const Simulation sim = simulate(put_then_reduce(), 8, kModel);
  CHECK(sim.finish == std::vector<double>{17, 25});
  CHECK(sim.time == 25);
  REQUIRE(sim.critical_path.size() == 2);
  CHECK(sim.critical_path[1].start == 17);
  CHECK(reasons(sim) == std::vector<std::string>{"start", "dependency"});
}

TEST_CASE("simulate: a late rank receives while away and starts its own steps on arrival") {
  const Simulation sim = simulate(put_then_reduce(), 8, kModel, {0, 100});
  CHECK(sim.finish == std::vector<double>{17, 108});
  CHECK(sim.critical_path.back().start == 100);
  CHECK(reasons(sim) == std::vector<std::string>{"arrival"});
}

TEST_CASE("simulate: two puts from one rank share its out port") {
  Builder b("fan_out", 3, 4);
  b.put(slot(0, Buffer::input, 4), slot(1, Buffer::scratch, 4));
  b.put(slot(0, Buffer::input, 4), slot(2, Buffer::scratch, 4));
  const Simulation sim = simulate(std::move(b).finish(), 8, kModel);
  CHECK(sim.finish == std::vector<double>{34, 17, 34});
  CHECK(reasons(sim) == std::vector<std::string>{"start", "busy"});
}

TEST_CASE("simulate: two levels, by hand: node-level cost inside a node, one shared link out of each node") {
  // Nodes {0,1,2}, {3,4,5}; 4 elements of 8 bytes = 32 bytes per put.
  Builder b("links", 6, 4);
  b.put(slot(0, Buffer::input, 4), slot(3, Buffer::scratch, 4));  // across: 1 + 0.5 * 32 = 17
  b.put(slot(1, Buffer::input, 4), slot(4, Buffer::scratch, 4));  // across, same out-link: waits for 0.5 * 32
  b.put(slot(2, Buffer::input, 4), slot(1, Buffer::scratch, 4));  // inside node 0: 2 + 0.25 * 32 = 10
  const Schedule s = std::move(b).finish();
  CostModel two_levels = kModel;
  two_levels.node_ranks = 3;
  two_levels.node_alpha = 2;
  two_levels.node_beta = 0.25;
  const Simulation sim = simulate(s, 8, two_levels);
  CHECK(sim.finish[0] == 17);
  CHECK(sim.finish[1] == 16 + 17);  // the link is free after the first put's bytes, not its alpha
  CHECK(sim.finish[2] == 10);
  // One level: each put on its own link, the third at network cost too.
  const Simulation flat = simulate(s, 8, kModel);
  CHECK(flat.finish[1] == 17);
  CHECK(flat.finish[2] == 17);
}

TEST_CASE("simulate: shared CPUs, by hand: ranks take turns on them") {
  // Three independent reductions (8 each) on three ranks.
  Builder b("three_reductions", 3, 4);
  for (int r = 0; r < 3; ++r) b.reduce(slot(r, Buffer::output, 4), slot(r, Buffer::input, 4), slot(r, Buffer::input, 4));
  const Schedule three = std::move(b).finish();
  CostModel shared = kModel;
  shared.cores = 2;
  // Two CPUs for three ranks: the third reduction waits for one (8 + 8).
  CHECK(simulate(three, 8, shared).finish == std::vector<double>{8, 8, 16});
  CHECK(simulate(three, 8, kModel).finish == std::vector<double>{8, 8, 8});
  shared.cores = 1;
  CHECK(simulate(three, 8, shared).finish == std::vector<double>{8, 16, 24});
  CostModel bad = shared;
  bad.cores = -1;
  CHECK_THROWS_AS(simulate(three, 8, bad), std::invalid_argument);
}

TEST_CASE("simulate: transfers on the CPU, by hand: a rank's put and its reduction take turns") {
  // Rank 0 puts into rank 1 (17) and, independently, reduces its input into
  // its scratch (8).
  Builder b("put_and_reduce", 2, 4);
  b.put(slot(0, Buffer::input, 4), slot(1, Buffer::scratch, 4));
  b.reduce(slot(0, Buffer::scratch, 4), slot(0, Buffer::input, 4), slot(0, Buffer::input, 4));
  const Schedule s = std::move(b).finish();
  CHECK(simulate(s, 8, kModel).finish == std::vector<double>{17, 17});  // the port and the CPU overlap
  CostModel on_cpu = kModel;
  on_cpu.transfers_on_cpu = true;
  CHECK(simulate(s, 8, on_cpu).finish == std::vector<double>{25, 17});  // the reduction waits for the copy
  REQUIRE(simulate(s, 8, on_cpu).critical_path.size() == 2);
  CHECK(reasons(simulate(s, 8, on_cpu)) == std::vector<std::string>{"start", "busy"});
  // Two levels: only a transfer inside a node is a copy on the sender's CPU.
  on_cpu.node_ranks = 1;  // ranks 0 and 1 on different nodes
  on_cpu.node_alpha = 1;
  on_cpu.node_beta = 0.5;
  CHECK(simulate(s, 8, on_cpu).finish == std::vector<double>{17, 17});
  on_cpu.node_ranks = 2;  // one node
  CHECK(simulate(s, 8, on_cpu).finish == std::vector<double>{25, 17});
}

TEST_CASE("simulate: a reduction into a third buffer costs gamma_apart, one in place gamma") {
  // 4 elements of 8 bytes: gamma 0.25 -> 8, gamma_apart 1 -> 32.
  auto reduction = [](Buffer dst) {
    Builder b("one_reduction", 1, 4);
    b.reduce(slot(0, dst, 4), slot(0, Buffer::scratch, 4), slot(0, Buffer::input, 4));
    return std::move(b).finish();
  };
  CostModel model = kModel;
  CHECK(simulate(reduction(Buffer::output), 8, model).time == 8);  // gamma_apart unset: gamma
  model.gamma_apart = 1;
  CHECK(simulate(reduction(Buffer::output), 8, model).time == 32);  // output = scratch op input
  CHECK(simulate(reduction(Buffer::scratch), 8, model).time == 8);  // scratch op= input
}

TEST_CASE("waits_on_other_ranks, by hand: along the longest chain of dependencies, and over all ranks") {
  const auto waits = [](const Schedule& s) {
    const WaitsOnOthers w = waits_on_other_ranks(s);
    return std::pair(w.longest, w.total);
  };
  CHECK(waits(put_then_reduce()) == std::pair(1, 1));
  // Rank 1 puts back what it reduced, and rank 0 reduces it: two waits.
  Builder b("there_and_back", 2, 4);
  b.put(slot(0, Buffer::input, 4), slot(1, Buffer::scratch, 4));
  b.reduce(slot(1, Buffer::output, 4), slot(1, Buffer::input, 4), slot(1, Buffer::scratch, 4));
  b.put(slot(1, Buffer::output, 4), slot(0, Buffer::scratch, 4));
  b.reduce(slot(0, Buffer::output, 4), slot(0, Buffer::input, 4), slot(0, Buffer::scratch, 4));
  CHECK(waits(std::move(b).finish()) == std::pair(2, 2));
  // Two ranks put into a third, which reduces both: two waits at one depth of
  // the chain, which one wake finds both of.
  Builder fan_in("fan_in", 3, 4);
  for (int r : {0, 1}) {
    const Slot landing{2, Buffer::scratch, Range{4 * static_cast<std::size_t>(r), 4}};
    fan_in.put(slot(r, Buffer::input, 4), landing);
    fan_in.reduce(slot(2, Buffer::output, 4), slot(2, Buffer::output, 4), landing);
  }
  CHECK(waits(std::move(fan_in).finish()) == std::pair(1, 1));
  // The catalogue at P = 4: a gather to rank 0 and a broadcast back (the
  // root woken once for its three inputs, then each non-root once); the
  // ring, each rank woken at each of its six steps.
  CHECK(waits(find_algorithm(Collective::allreduce, "linear")->make(4, 16, {}, 4)) == std::pair(2, 4));
  CHECK(waits(find_algorithm(Collective::allreduce, "ring")->make(4, 16, {}, 4)) == std::pair(6, 24));
  // Local steps alone wait on nobody.
  Builder local("local", 2, 4);
  local.reduce(slot(0, Buffer::output, 4), slot(0, Buffer::input, 4), slot(0, Buffer::input, 4));
  CHECK(waits(std::move(local).finish()) == std::pair(0, 0));
}

TEST_CASE("simulate: bad arrivals or a negative model are refused") {
  CHECK_THROWS_AS(simulate(put_then_reduce(), 8, kModel, {0, 1, 2}), std::invalid_argument);
  CHECK_THROWS_AS(simulate(put_then_reduce(), 8, CostModel{-1, 0, 0}), std::invalid_argument);
}

TEST_CASE("simulate: with alpha only, catalogue allreduces take their round count") {
  const CostModel latency_only{1.0, 0, 0, 0};
  for (const char* name : {"ring", "recursive_doubling", "rabenseifner"})
    for (int ranks : {2, 4, 8, 16}) {
      CAPTURE(name);
      CAPTURE(ranks);
      const Schedule s = find_algorithm(Collective::allreduce, name)->make(ranks, 1024, AlgorithmParams{}, 4);
      CHECK(simulate(s, 4, latency_only).time == static_cast<double>(schedule_stats(s).rounds));
    }
}

TEST_CASE("simulate: with beta only, the ring moves 2(P-1)/P of the vector through each port") {
  const CostModel bandwidth_only{0, 1.0, 0, 0};
  for (int ranks : {2, 3, 4, 8}) {
    CAPTURE(ranks);
    const std::size_t count = 840;  // divisible by every P here
    const Schedule s = find_algorithm(Collective::allreduce, "ring")->make(ranks, count, AlgorithmParams{}, 4);
    const double bytes = count * 4.0;
    CHECK(simulate(s, 4, bandwidth_only).time == doctest::Approx(2.0 * (ranks - 1) / ranks * bytes));
  }
}

// A bcast root's copy of its input onto its output: the runtime skips it
// (one buffer), so the simulator charges it only where the shape says the
// buffers are separate.
TEST_CASE("simulate: a copy onto the same buffer costs nothing where input and output are one") {
  auto root_copy_then_put = [](bool in_place) {
    Builder b("root_copy", 2, 4, Shape{4, 4, in_place});
    b.put(slot(0, Buffer::input, 4), slot(1, Buffer::scratch, 4));
    b.copy(slot(0, Buffer::output, 4), slot(0, Buffer::input, 4));
    b.copy(slot(1, Buffer::output, 4), slot(1, Buffer::scratch, 4));
    return std::move(b).finish();
  };
  CostModel model = kModel;
  model.copy_per_byte = 2;  // 32 bytes: 64, after the put that reads the input (17)
  CHECK(simulate(root_copy_then_put(false), 8, model).finish == std::vector<double>{81, 81});
  CHECK(simulate(root_copy_then_put(true), 8, model).finish == std::vector<double>{17, 81});
  const Schedule bcast = find_algorithm(Collective::bcast, "chain")->make(2, 1 << 16, {}, 4);
  CHECK(bcast.shape().in_place);
}
