// Communicator::sum_outer_products — DSOP (collectives/outer_products.hpp
// names the algorithms and predicts them). Every algorithm is a sequence of
// stages; a stage is one partitioned collective, queued when the call is
// made (so the communicator's order is the call's), whose parts a producer
// computes and readies on a worker thread once the stage before has
// completed; a last local step may follow the last stage.
//
//   algorithm                 stage 1 (producer)              stage 2 (producer)                 last step
//   allgather                 allgather pairs (-)             -                                  all of G
//   allreduce                 allreduce G (own product)       -                                  -
//   allreduce_ring            ring allreduce G in row parts   -                                  -
//                             (own product, part by part)
//   generalized_rabenseifner  allgather pairs (-)             allgather blocks (own block        -
//                                                             of G, and G's tail, from all pairs)
//
// A failure anywhere drops the stages not yet produced (their parts fail
// instead of running on unwritten data) and the call's Future carries the
// first error, prefixed with this call's description (rank included) — but
// only once every producer has stopped: a stage can fail while its producer
// still writes into G, and the caller may free G as soon as the Future is
// done. The stages hold the communicator's core, not the user's handle: dropping the
// user's last handle closes the communicator on the user's thread, which
// waits for the queued stages; workers keep producing them meanwhile.
#include "../base/outer_product_kernels.hpp"
#include "../config/algorithm_choice.hpp"
#include "comm_core.hpp"

#include <earlybird/collectives/outer_products.hpp>
#include <earlybird/communicator.hpp>

#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>

namespace earlybird {
namespace {

using coll::Collective;
using coll::OuterProductAlgorithm;
using detail::CollectiveCall;
using Bytes = std::vector<std::byte>;

// What one call's stages share; alive until its Future completes.
struct OuterProducts {
  std::string description;
  Datatype type = Datatype::float64;
  std::size_t rows = 0, cols = 0, elem = 0;
  int rank = 0, ranks = 1;
  std::byte* g = nullptr;
  std::shared_ptr<Bytes> own_pair;   // (a, b) packed
  std::shared_ptr<Bytes> all_pairs;  // every rank's pair, in rank order
  std::shared_ptr<Bytes> block;      // generalized Rabenseifner: this rank's block of G

  std::mutex mutex;
  std::exception_ptr first_error;

  void record(std::exception_ptr error) {
    std::lock_guard lock(mutex);
    if (!first_error) first_error = error;
  }
  bool failed() {
    std::lock_guard lock(mutex);
    return first_error != nullptr;
  }
  std::exception_ptr error_to_report() {
    std::lock_guard lock(mutex);
    try {
      std::rethrow_exception(first_error);
    } catch (const std::exception& e) {
      return std::make_exception_ptr(Error(description + ": " + e.what()));
    } catch (...) {
      return std::make_exception_ptr(Error(description + ": unknown error"));
    }
  }
  // G's elements [begin, end) from `pairs` (`count` of them) into `out`.
  void products(const Bytes& pairs, std::size_t count, std::size_t begin, std::size_t end, std::byte* out) const {
    kernels::outer_product_sum(type, {pairs.data(), count, rows, cols}, begin, end, out);
  }
};

struct Stage {
  PartitionedCollective collective;
  std::function<void(PartitionedCollective&)> produce;  // computes the parts and readies each
};

Future completed() {
  auto state = std::make_shared<detail::FutureState>();
  state->complete();
  return Future(state);
}

// Runs `work` on a worker thread (never the progress thread: it may compute
// for long, and may release the communicator); then `done` with what it threw
// (or nullptr).
void on_worker(std::function<void()> work, std::function<void(std::exception_ptr)> done) {
  completed().then(std::move(work)).on_complete(std::move(done));
}

// Counts what must settle before the call's Future may complete: every
// stage's producer (run, failed or dropped: until then it may write into the
// caller's G) and the last stage's collective. The last to settle completes
// `result`: with the first error, else after `last`.
class Settling {
 public:
  Settling(std::shared_ptr<OuterProducts> call, std::size_t count, std::function<void()> last)
      : call_(std::move(call)), left_(count), last_(std::move(last)),
        result_(std::make_shared<detail::FutureState>()) {}

  Future future() const { return Future(result_); }

  // One of them settled, having failed with `error` (nullptr: it did not).
  static void settle(const std::shared_ptr<Settling>& self, std::exception_ptr error) {
    if (error) self->call_->record(error);
    {
      std::lock_guard lock(self->mutex_);
      if (--self->left_ > 0) return;
    }
    self->finish();
  }

 private:
  void finish() {
    if (call_->failed()) return result_->fail(call_->error_to_report());
    on_worker(last_ ? last_ : [] {}, [call = call_, result = result_](std::exception_ptr error) {
      if (!error) return result->complete();
      call->record(error);
      result->fail(call->error_to_report());
    });
  }

  std::shared_ptr<OuterProducts> call_;
  std::mutex mutex_;
  std::size_t left_;
  std::function<void()> last_;
  std::shared_ptr<detail::FutureState> result_;
};

// The stages in order, then `last`; the call's Future.
Future run_stages(const std::shared_ptr<OuterProducts>& call, std::vector<std::shared_ptr<Stage>> stages,
                  std::function<void()> last) {
  auto settling = std::make_shared<Settling>(call, stages.size() + 1, std::move(last));
  // Every stage's Future first: a producer may finish (and let go of its
  // handle) as soon as the callback below is registered.
  std::vector<Future> finished;
  for (const auto& stage : stages) finished.push_back(stage->collective.future());
  Future previous = completed();
  for (std::size_t k = 0; k < stages.size(); ++k) {
    previous.on_complete([stage = stages[k], settling](std::exception_ptr error) {
      on_worker(
          [stage, error] {
            // The handle is let go here, on the worker, whether the producer
            // readied every part, threw, or never ran (a failure before this
            // stage): unreadied parts fail rather than run on unwritten data.
            struct LetGo {
              Stage& stage;
              ~LetGo() { stage.collective = PartitionedCollective(); }
            } let_go{*stage};
            if (!error) stage->produce(stage->collective);
          },
          [settling, error](std::exception_ptr failure) { Settling::settle(settling, failure ? failure : error); });
    });
    previous = finished[k];
  }
  previous.on_complete([settling](std::exception_ptr error) { Settling::settle(settling, error); });
  return settling->future();
}

// One stage over `whole`, cut into `parts` (element counts).
std::shared_ptr<Stage> stage(const std::shared_ptr<detail::CommCore>& core, const CollectiveCall& whole,
                             std::vector<std::size_t> parts, std::function<void(PartitionedCollective&)> produce) {
  auto s = std::make_shared<Stage>();
  s->collective = detail::make_partitioned(core, whole, std::move(parts));
  s->produce = std::move(produce);
  return s;
}

CollectiveCall call_of(Collective collective, const void* in, void* out, std::size_t count, Datatype type,
                       const CollectiveOptions& options, std::shared_ptr<Bytes> owned = nullptr) {
  return {collective, in, out, count, type, Op::sum, 0, options, std::move(owned)};
}

// allgather the pairs into call->all_pairs (stage 1 of allgather and
// generalized_rabenseifner): nothing to compute first.
std::shared_ptr<Stage> gather_pairs(const std::shared_ptr<detail::CommCore>& core,
                                    const std::shared_ptr<OuterProducts>& call, const CollectiveOptions& inner) {
  const std::size_t pair = call->rows + call->cols;
  call->all_pairs = std::make_shared<Bytes>(pair * call->elem * static_cast<std::size_t>(call->ranks));
  return stage(core,
               call_of(Collective::allgather, call->own_pair->data(), call->all_pairs->data(), pair, call->type, inner,
                       call->own_pair),
               {pair}, [](PartitionedCollective& c) { c.ready(0); });
}

Future run_algorithm(const std::shared_ptr<detail::CommCore>& core, const std::shared_ptr<OuterProducts>& call,
                     OuterProductAlgorithm algorithm, CollectiveOptions inner) {
  const std::size_t elements = call->rows * call->cols;
  const auto ranks = static_cast<std::size_t>(call->ranks);
  switch (algorithm) {
    case OuterProductAlgorithm::allgather:
      return run_stages(call, {gather_pairs(core, call, inner)},
                        [call, elements, ranks] { call->products(*call->all_pairs, ranks, 0, elements, call->g); });
    case OuterProductAlgorithm::allreduce:
      return run_stages(call,
                        {stage(core, call_of(Collective::allreduce, call->g, call->g, elements, call->type, inner),
                               {elements},
                               [call, elements](PartitionedCollective& c) {
                                 call->products(*call->own_pair, 1, 0, elements, call->g);
                                 c.ready(0);
                               })},
                        nullptr);
    case OuterProductAlgorithm::allreduce_ring: {
      inner.algorithm = "ring";
      auto parts = coll::ring_row_parts(call->rows, call->cols);
      return run_stages(call,
                        {stage(core, call_of(Collective::allreduce, call->g, call->g, elements, call->type, inner),
                               parts,
                               [call, parts](PartitionedCollective& c) {
                                 std::size_t begin = 0;
                                 for (std::size_t k = 0; k < parts.size(); ++k) {
                                   call->products(*call->own_pair, 1, begin, begin + parts[k],
                                                  call->g + begin * call->elem);
                                   c.ready(k);
                                   begin += parts[k];
                                 }
                               })},
                        nullptr);
    }
    case OuterProductAlgorithm::generalized_rabenseifner: {
      const coll::ElementBlocks blocks = coll::element_blocks(call->ranks, elements);
      call->block = std::make_shared<Bytes>(blocks.block * call->elem);
      auto produce_block = [call, blocks, elements, ranks](PartitionedCollective& c) {
        const std::size_t mine = static_cast<std::size_t>(call->rank) * blocks.block;
        call->products(*call->all_pairs, ranks, mine, mine + blocks.block, call->block->data());
        call->products(*call->all_pairs, ranks, blocks.tail_begin, elements, call->g + blocks.tail_begin * call->elem);
        c.ready(0);
      };
      auto pairs_stage = gather_pairs(core, call, inner);  // queued first
      auto blocks_stage = stage(core,
                                call_of(Collective::allgather, call->block->data(), call->g, blocks.block, call->type,
                                        inner, call->block),
                                {blocks.block}, produce_block);
      return run_stages(call, {pairs_stage, blocks_stage}, nullptr);
    }
  }
  return Future(detail::failed_future(call->description + ": no such algorithm"));
}

// Whether [a, a + a_bytes) and [b, b + b_bytes) share a byte.
bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return a_bytes > 0 && b_bytes > 0 && x < y + b_bytes && y < x + a_bytes;
}

// Why this rank's call cannot run; empty when it can.
std::string problem_of(const void* a, const void* b, const void* g, std::size_t rows, std::size_t cols,
                       std::size_t elem) {
  if (cols != 0 && rows > SIZE_MAX / cols / elem) return "the matrix's size overflows";
  if ((rows && !a) || (cols && !b)) return "a null input vector";
  if (rows * cols != 0 && !g) return "a null output matrix";
  const std::size_t g_bytes = rows * cols * elem;
  if (overlap(g, g_bytes, a, rows * elem) || overlap(g, g_bytes, b, cols * elem))
    return "the output matrix overlaps an input vector";
  return "";
}

std::string describe(const std::string& algorithm, std::size_t rows, std::size_t cols, Datatype type, int rank,
                     int ranks) {
  return "earlybird sum_outer_products(algorithm=" + algorithm + ", rows=" + std::to_string(rows) +
         ", cols=" + std::to_string(cols) + ", type=" + to_string(type) + ") on rank " + std::to_string(rank) +
         " of " + std::to_string(ranks);
}

}  // namespace

Future Communicator::sum_outer_products(const void* a, const void* b, void* g, std::size_t rows, std::size_t cols,
                                        Datatype type, const CollectiveOptions& options) {
  if (!core_) return Future(detail::failed_future("earlybird sum_outer_products: invalid (default-constructed) communicator"));
  detail::CommCore& core = *core_;
  const std::size_t elem = size_of(type);
  auto call = std::make_shared<OuterProducts>();
  call->type = type;
  call->rows = rows;
  call->cols = cols;
  call->elem = elem;
  call->rank = core.rank();
  call->ranks = core.size();
  call->g = static_cast<std::byte*>(g);
  const bool chosen = options.algorithm.empty() || options.algorithm == "auto";
  std::optional<OuterProductAlgorithm> algorithm;
  std::string explanation;
  if (chosen) {
    const bool log = core.options().verbose && core.rank() == 0;
    algorithm = config::default_outer_product_algorithm(core.size(), rows, cols, elem, core.direct(),
                                                        log ? &explanation : nullptr);
    if (!explanation.empty()) std::fputs(explanation.c_str(), stderr);
  } else {
    algorithm = coll::find_outer_product_algorithm(options.algorithm);
  }
  call->description = describe(algorithm ? std::string(coll::to_string(*algorithm)) : options.algorithm, rows, cols,
                               type, call->rank, call->ranks);
  if (!algorithm)
    return Future(detail::failed_future(call->description + ": no such algorithm (sum_outer_products has " +
                                        coll::outer_product_algorithm_names() + ")"));
  if (const std::string problem = problem_of(a, b, g, rows, cols, elem); !problem.empty())
    return Future(detail::failed_future(call->description + ": " + problem));
  call->own_pair = std::make_shared<Bytes>((rows + cols) * elem);
  if (rows) std::memcpy(call->own_pair->data(), a, rows * elem);
  if (cols) std::memcpy(call->own_pair->data() + rows * elem, b, cols * elem);
  CollectiveOptions inner = options;
  inner.algorithm.clear();
  return run_algorithm(core.shared_from_this(), call, *algorithm, inner);
}

}  // namespace earlybird
