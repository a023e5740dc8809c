// Pipelined CG (pipelined_recurrences.hpp) as a oneTBB flow graph: the
// reduction is an earlybird persistent allreduce, started by one node and
// waited for by the node that needs its result, so the graph runs the
// matrix-vector product while the reduction is in flight. The waiting node
// drives the reduction itself if it has not finished (no wake-up by another
// thread); a completion callback into an async_node would instead wait for
// the progress thread to get a core, which costs scheduler ticks when a rank
// has one core and TBB's threads spin on it.
//
//   node     runs                                      after
//   next     hands iteration i to reduce and spmv       start, or update of i-1
//   reduce   start() the allreduce of the local dots    next
//   spmv     halo exchange, q = A w                     next   (in parallel)
//   update   wait for the reduction; alpha, beta;       reduce and spmv (join)
//            the z s p x r w recurrences
//            with the next local dots in the same pass;
//            stops at the tolerance, else next i+1
#include "pipelined_recurrences.hpp"

#include <earlybird/persistent.hpp>

#include <oneapi/tbb/flow_graph.h>

#include <exception>
#include <span>
#include <tuple>

namespace cg {

namespace flow = oneapi::tbb::flow;

Solve pipelined_cg(const Slab& slab, const Vector& b, Limits limits, earlybird::Communicator& comm) {
  Solve solve;
  Recurrences state(slab, b, limits);
  earlybird::PersistentCollective reduction = comm.allreduce_init(state.dots(), state.reduced(), earlybird::Op::sum);
  std::exception_ptr failure;  // the reduction's, if it failed
  int last_iteration = 0;

  flow::graph graph;
  flow::broadcast_node<int> next(graph);
  earlybird::Future in_flight;  // this iteration's reduction
  // reduce and update are lightweight: they run in the thread that fed them,
  // with no task hand-off (spmv gets a task of its own, to run beside).
  flow::function_node<int, int, flow::lightweight> reduce(graph, flow::serial, [&](int i) {
    in_flight = reduction.start();
    return i;
  });
  flow::function_node<int, int> spmv(graph, flow::serial, [&](int i) {
    state.product();
    return i;
  });
  flow::join_node<std::tuple<int, int>, flow::queueing> both(graph);
  using Update = flow::multifunction_node<std::tuple<int, int>, std::tuple<int>, flow::lightweight>;
  Update update(graph, flow::serial, [&](const std::tuple<int, int>& done, Update::output_ports_type& next) {
    const int i = std::get<0>(done);
    last_iteration = i;
    try {
      in_flight.wait();  // drives the reduction if it is still in flight
    } catch (...) {
      failure = std::current_exception();
      return;
    }
    if (state.step(i, solve.history)) std::get<0>(next).try_put(i + 1);
  });
  flow::make_edge(next, reduce);
  flow::make_edge(next, spmv);
  flow::make_edge(reduce, flow::input_port<0>(both));
  flow::make_edge(spmv, flow::input_port<1>(both));
  flow::make_edge(both, update);
  flow::make_edge(flow::output_port<0>(update), next);

  const double t0 = MPI_Wtime();
  state.start();
  next.try_put(0);
  graph.wait_for_all();
  solve.seconds = MPI_Wtime() - t0;
  if (failure) std::rethrow_exception(failure);
  solve.iterations = last_iteration;
  solve.x = state.x();
  return solve;
}

}  // namespace cg
