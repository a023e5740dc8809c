#include <earlybird/collectives/schedule.hpp>

#include <algorithm>

namespace earlybird::coll {

int Step::peer() const {
  switch (kind) {
    case StepKind::put: return dst.rank;
    case StepKind::get: return src.rank;
    default: return -1;
  }
}

std::size_t Schedule::max_scratch_elems() const {
  return scratch_elems_.empty() ? 0 : *std::max_element(scratch_elems_.begin(), scratch_elems_.end());
}

std::uint32_t Schedule::max_flag_count() const {
  return flag_count_.empty() ? 0 : *std::max_element(flag_count_.begin(), flag_count_.end());
}

ScheduleStats schedule_stats(const Schedule& schedule) {
  ScheduleStats stats;
  stats.per_rank.resize(static_cast<std::size_t>(schedule.ranks()));
  const auto steps = schedule.steps();
  std::vector<std::size_t> depth(steps.size(), 0);
  for (StepId id = 0; id < steps.size(); ++id) {
    const Step& step = steps[id];
    auto& owner = stats.per_rank[static_cast<std::size_t>(step.owner)];
    const std::size_t n = step.src.range.count;
    switch (step.kind) {
      case StepKind::put: owner.puts++; owner.elems_sent += n; break;
      case StepKind::get:
        owner.puts++;
        stats.per_rank[static_cast<std::size_t>(step.src.rank)].elems_sent += n;
        break;
      case StepKind::reduce: owner.elems_reduced += n; break;
      case StepKind::copy: break;
    }
    std::size_t before = 0;
    for (StepId d : schedule.deps(id)) before = std::max(before, depth[d]);
    depth[id] = before + (step.is_transfer() ? 1 : 0);
    stats.rounds = std::max(stats.rounds, depth[id]);
  }
  return stats;
}

const char* to_string(StepKind kind) {
  switch (kind) {
    case StepKind::put: return "put";
    case StepKind::get: return "get";
    case StepKind::reduce: return "reduce";
    case StepKind::copy: return "copy";
  }
  return "?";
}

const char* to_string(Buffer buffer) {
  switch (buffer) {
    case Buffer::input: return "input";
    case Buffer::output: return "output";
    case Buffer::scratch: return "scratch";
  }
  return "?";
}

namespace {
std::string slot_string(const Slot& slot) {
  return std::to_string(slot.rank) + "." + to_string(slot.buffer) + "[" +
         std::to_string(slot.range.begin) + "," + std::to_string(slot.range.end()) + ")";
}
}  // namespace

std::string to_string(const Step& step) {
  const std::string left = step.kind == StepKind::reduce ? slot_string(step.left) + " op " : "";
  return std::string(to_string(step.kind)) + " " + slot_string(step.dst) + " <- " + left + slot_string(step.src);
}

}  // namespace earlybird::coll
