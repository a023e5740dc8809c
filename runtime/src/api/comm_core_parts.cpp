// CommCore, a partitioned allreduce's parts (comm_core.hpp, PartGates;
// api/partitioned.cpp is the user's handle): queued at creation, each held
// by its gate until ready(k) opens it; small parts driven by the readying
// thread itself.
#include "comm_core.hpp"

#include "../pap/arrival_policy.hpp"

#include <string>

namespace earlybird::detail {

Future CommCore::run_partitioned(const std::vector<CollectiveCall>& parts, const std::shared_ptr<PartGates>& gates) {
  // Whoever waits for the last parts drives them (as for a caller-run call
  // that did not finish at once) rather than sleeping until the progress
  // thread wakes it.
  auto future = std::make_shared<FutureState>();
  future->set_helper(weak_from_this());
  std::vector<Pending> items;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const CollectiveCall& call = parts[k];
    const CallContext context{future, arrival_.count_call(), 0};
    std::shared_ptr<const Prepared> p;
    std::string problem = prepare_checked(call, p);
    if (problem.empty() && pap::arrival_ordered(*p->info))
      problem = p->description + ": arrival-ordered algorithms cannot run a partitioned allreduce";
    if (!problem.empty()) return Future(failed_future("part " + std::to_string(k) + ": " + problem));
    gates->caller_runs[k] = p->caller_run;
    try {
      for (std::size_t b = 0; b < p->batch_keys.size(); ++b) {
        Pending item = batch(call, p, b, context);
        item.last_of_call = k + 1 == parts.size() && b + 1 == p->batch_keys.size();
        item.gates = gates;
        item.part = k;
        items.push_back(std::move(item));
      }
    } catch (const std::exception& e) {
      return Future(failed_future(p->description + ": " + e.what()));
    }
  }
  enqueue(std::move(items));
  return Future(future);
}

void CommCore::release_part(const std::shared_ptr<PartGates>& gates, std::size_t part) {
  auto release = [gates, part] { gates->released[part] = 1; };
  if (!gates->caller_runs[part]) return driver_.post(release);
  {
    DriveHold hold(driver_, true);
    if (!hold) return driver_.post(release);
    driver_.run_posted();  // the parts' queue entries first
    release();
    auto ours = [&](const Pending& pending) { return pending.op && pending.gates == gates; };
    drive_while([&] { return ours(active_) || (head_startable() && ours(queue_.front())); }, options_.caller_run);
    busy_.store(active_.op || head_startable(), std::memory_order_relaxed);
  }
  wake_engine_if_work_left();
}

void CommCore::abandon_parts(const std::shared_ptr<PartGates>& gates) {
  driver_.post([gates] { gates->abandoned = true; });
}

}  // namespace earlybird::detail
