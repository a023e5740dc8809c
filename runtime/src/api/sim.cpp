#include "comm_core.hpp"

#include "../rma/inproc_transport.hpp"
#include "../topo/topology.hpp"

#include <earlybird/sim.hpp>

#include <exception>
#include <mutex>
#include <string>
#include <thread>

namespace earlybird {

struct SimWorld::Impl {
  std::vector<std::unique_ptr<ProgressEngine>> engines;  // outlive the communicators
  std::vector<Communicator> comms;
};

SimWorld::SimWorld(int ranks, SimOptions options) : impl_(std::make_unique<Impl>()) {
  if (ranks < 1) throw Error("SimWorld: ranks must be >= 1");
  if (options.ranks_per_node < 0 || (options.ranks_per_node > 0 && ranks % options.ranks_per_node != 0))
    throw Error("SimWorld: ranks_per_node " + std::to_string(options.ranks_per_node) + " does not divide " +
                std::to_string(ranks) + " ranks");
  const int node_ranks = options.ranks_per_node < ranks ? options.ranks_per_node : 0;  // one node: 0
  config::CommOptions comm_options;
  comm_options.scratch_bytes = options.scratch_bytes;
  comm_options.flags_per_lane = 1u << 14;
  comm_options.timeout = options.timeout;
  comm_options.caller_run = options.caller_run;
  comm_options.tune = options.tune;
  comm_options.tune_candidates = options.tune_candidates;
  comm_options.tune_budget = options.tune_budget;
  auto fabric = std::make_shared<InProcFabric>(ranks, detail::layout_for(comm_options, ranks).window_size(),
                                               node_ranks);
  topo::note_machine_ranks(ranks);  // the simulated ranks share this process's CPUs
  for (int r = 0; r < ranks; ++r) {
    const EngineOptions engine{options.worker_threads, -1, config::injected_stall_from_environment()};
    impl_->engines.push_back(std::make_unique<ProgressEngine>(engine));
    auto transport = std::make_unique<InProcTransport>(fabric, r, options.by_messages);
    auto core = detail::CommCore::create(*impl_->engines.back(), std::move(transport), comm_options);
    impl_->comms.emplace_back(detail::user_handle(std::move(core)));
  }
}

SimWorld::~SimWorld() {
  impl_->comms.clear();    // closes each communicator (drains its queue)
  impl_->engines.clear();  // joins the progress threads, which release the cores
}

int SimWorld::size() const { return static_cast<int>(impl_->comms.size()); }

Communicator& SimWorld::communicator(int rank) { return impl_->comms.at(static_cast<std::size_t>(rank)); }

void SimWorld::run(const std::function<void(int, Communicator&)>& body) {
  std::mutex mutex;
  std::exception_ptr first;
  std::vector<std::thread> threads;
  for (int r = 0; r < size(); ++r)
    threads.emplace_back([&, r] {
      try {
        body(r, communicator(r));
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!first) first = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace earlybird
