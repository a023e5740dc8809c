#include "plan_writer.hpp"

#include <algorithm>
#include <stdexcept>

namespace earlybird::coll::detail {
namespace {

// CSR lists from (key, value) pairs, values kept in insertion order per key:
// begin[k] .. begin[k + 1] index `values`.
void group_by_key(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& pairs, std::size_t keys,
                  std::vector<std::uint32_t>& begin, std::vector<std::uint32_t>& values) {
  begin.assign(keys + 1, 0);
  for (const auto& [key, value] : pairs) ++begin[key + 1];
  for (std::size_t k = 0; k < keys; ++k) begin[k + 1] += begin[k];
  values.resize(pairs.size());
  std::vector<std::uint32_t> next(begin.begin(), begin.end() - 1);
  for (const auto& [key, value] : pairs) values[next[key]++] = value;
}

}  // namespace

PlanWriter::PlanWriter(std::string algorithm, int rank, int ranks, std::size_t count, Shape shape) {
  plan_.algorithm = std::move(algorithm);
  plan_.rank = rank;
  plan_.ranks = ranks;
  plan_.count = count;
  plan_.shape = shape;
}

std::uint32_t PlanWriter::add(const PlanStep& step) {
  PlanStep s = step;
  s.waits = 0;
  s.note_begin = s.note_end = static_cast<std::uint32_t>(plan_.notes.size());
  const bool local_src = s.kind != StepKind::get;  // a get reads a peer's scratch
  if (local_src && s.src_buffer == Buffer::scratch) uses_scratch(s.src.end());
  if (s.kind != StepKind::put && s.dst_buffer == Buffer::scratch) uses_scratch(s.dst.end());
  if (s.kind == StepKind::reduce && s.left_buffer == Buffer::scratch) uses_scratch(s.left.end());
  plan_.steps.push_back(s);
  return last();
}

std::uint32_t PlanWriter::last() const {
  if (plan_.steps.empty()) throw std::logic_error(plan_.algorithm + ": plan dependency before any step");
  return static_cast<std::uint32_t>(plan_.steps.size() - 1);
}

void PlanWriter::after(std::uint32_t earlier) {
  const std::uint32_t step = last();
  if (earlier >= step) throw std::logic_error(plan_.algorithm + ": plan step waits for a later one");
  local_edges_.emplace_back(earlier, step);
  ++plan_.steps[step].waits;
}

void PlanWriter::after_flag(std::uint32_t flag, int source) {
  const std::uint32_t step = last();
  flag_edges_.emplace_back(flag, step);
  if (flag >= plan_.flag_source.size()) plan_.flag_source.resize(flag + 1, -1);
  plan_.flag_source[flag] = source;
  ++plan_.steps[step].waits;
}

void PlanWriter::raise(int target, std::uint32_t flag) {
  PlanStep& step = plan_.steps[last()];
  plan_.notes.push_back({target, flag});
  step.note_end = static_cast<std::uint32_t>(plan_.notes.size());
}

void PlanWriter::uses_scratch(std::size_t end) { plan_.scratch_elems = std::max(plan_.scratch_elems, end); }

RankPlan PlanWriter::finish(std::uint32_t flags) && {
  if (plan_.flag_source.size() != flags || std::count(plan_.flag_source.begin(), plan_.flag_source.end(), -1) != 0)
    throw std::logic_error(plan_.algorithm + ": plan flags are not numbered 0.." + std::to_string(flags) + " - 1");
  plan_.flags = flags;
  std::vector<std::uint32_t> succ_begin;
  group_by_key(local_edges_, plan_.steps.size(), succ_begin, plan_.successors);
  for (std::size_t i = 0; i < plan_.steps.size(); ++i) {
    plan_.steps[i].succ_begin = succ_begin[i];
    plan_.steps[i].succ_end = succ_begin[i + 1];
  }
  group_by_key(flag_edges_, flags, plan_.release_begin, plan_.release);
  return std::move(plan_);
}

}  // namespace earlybird::coll::detail
