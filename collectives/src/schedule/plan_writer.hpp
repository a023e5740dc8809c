// Internal: PlanWriter writes one rank's RankPlan directly, for generators
// that know their dependencies in closed form and so need neither the global
// schedule nor the Builder's hazard tracking (a ring at P = 16384 has 4P
// steps per rank but 4P^2 in all). The result must equal project() of the
// whole schedule; tests/unit/test_rank_plans.cpp checks every such emitter
// against it.
//
// The emitter adds its rank's steps in the order the whole schedule has them
// (program order) and, while a step is the last one added, names what it
// waits for (earlier local steps, flags) and the flags it raises in peers.
// Flags are numbered by the emitter: per receiving rank, in program order of
// their source steps, as Builder::finish numbers them.
#pragma once

#include <earlybird/collectives/plan.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace earlybird::coll::detail {

// Steps as plan_writer takes them (the arguments read as in Builder).
inline PlanStep plan_put(int peer, Buffer src_buffer, Range src, Range dst_in_peer_scratch) {
  PlanStep p;
  p.kind = StepKind::put;
  p.peer = peer;
  p.src_buffer = src_buffer;
  p.src = src;
  p.dst_buffer = Buffer::scratch;
  p.dst = dst_in_peer_scratch;
  return p;
}
// dst = left (op) src
inline PlanStep plan_reduce(Buffer dst_buffer, Range dst, Buffer left_buffer, Range left, Buffer src_buffer,
                            Range src) {
  PlanStep p;
  p.kind = StepKind::reduce;
  p.dst_buffer = dst_buffer;
  p.dst = dst;
  p.left_buffer = left_buffer;
  p.left = left;
  p.src_buffer = src_buffer;
  p.src = src;
  return p;
}
inline PlanStep plan_copy(Buffer dst_buffer, Range dst, Buffer src_buffer, Range src) {
  PlanStep p;
  p.kind = StepKind::copy;
  p.dst_buffer = dst_buffer;
  p.dst = dst;
  p.src_buffer = src_buffer;
  p.src = src;
  return p;
}

class PlanWriter {
 public:
  PlanWriter(std::string algorithm, int rank, int ranks, std::size_t count, Shape shape);

  // Appends a step (kind, peer, buffers and ranges; the rest is derived) and
  // returns its local index. A scratch range read by a local step counts
  // towards the rank's scratch size.
  std::uint32_t add(const PlanStep& step);
  // The last added step waits for local step `earlier`.
  void after(std::uint32_t earlier);
  // The last added step waits for flag `flag`, raised by rank `source`.
  void after_flag(std::uint32_t flag, int source);
  // The last added step raises flag `flag` in rank `target`'s window.
  void raise(int target, std::uint32_t flag);
  std::size_t steps_written() const { return plan_.steps.size(); }
  // Rank's scratch also reaches `end` (elements peers write but no local step reads).
  void uses_scratch(std::size_t end);

  // `flags`: how many flags this rank receives (each must have been waited for).
  RankPlan finish(std::uint32_t flags) &&;

 private:
  std::uint32_t last() const;
  RankPlan plan_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> local_edges_;  // (earlier, later)
  std::vector<std::pair<std::uint32_t, std::uint32_t>> flag_edges_;   // (flag, step)
};

}  // namespace earlybird::coll::detail
