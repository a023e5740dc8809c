// Communicator::tune (earlybird/tune.hpp, communicator.hpp): `auto`'s
// candidates for one size class timed on the running communicator, the
// fastest pinned for the class (CommCore::pin).
//
// The model ranks by one profile for the whole process; on a machine whose
// speed for some paths changes between jobs (docs/benchmarks.md, "P = 2
// bcast and reduce from 1 MiB") its margins are smaller than the change, and
// only a measurement on the running communicator finds the faster entry.
//
// Cost: per candidate two untimed calls and `rounds` timed ones, each timed
// call after a 4-byte allreduce that lines the ranks up; two allreduces of
// doubles that agree on the figures. `rounds` = budget / (the candidates'
// first times added up), between kLeastRounds and kMostRounds.
//
// Every rank reaches the same decision from the same figures:
//   step         each rank                                   agreed by
//   candidates   the model's ranking, or options.algorithms  a pure function of the call and the level
//   first calls  each candidate twice, the second timed      allreduce (max) of the times
//   rounds       budget / their sum, clamped                 same inputs everywhere
//   trials       per round, one seeded shuffle: sync, call   same seed, same order
//   verdict      allreduce (max) per sample, medians, argmin same figures everywhere
//   pin          CommCore::pin(class, the winner)
// Limitations: the trial buffers are this call's own (plain memory, zeros),
// so a class of calls with shared_buffers is not tuned here; a candidate's
// time includes the skew the sync leaves (as eb-bench sweep's barrier does).
#include "comm_core.hpp"

#include <earlybird/communicator.hpp>
#include <earlybird/tune.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstddef>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace earlybird {
namespace {

using coll::Collective;

constexpr int kLeastRounds = 5;
constexpr int kMostRounds = 400;
// Seeds the order the candidates are timed in within each round (the same
// on every rank).
constexpr unsigned kOrderSeed = 20261204;

// Set while this thread runs a tune: its own `auto` calls (lining up,
// agreeing on figures) are not tuned first (tune_on_first_use).
thread_local bool tl_tuning = false;

struct TuningScope {
  TuningScope() { tl_tuning = true; }
  ~TuningScope() { tl_tuning = false; }
  TuningScope(const TuningScope&) = delete;
  TuningScope& operator=(const TuningScope&) = delete;
};

// The last `auto` call this thread asked tune_on_first_use about, past the
// cheap checks (a repeated call then costs a comparison, not a class
// lookup). A communicator closed and another made at its address could skip
// one class's tune: it then runs the model's choice.
struct CheckedCall {
  const void* core = nullptr;
  Collective collective = Collective::allreduce;
  std::size_t bytes = 0;
  bool commutative = true;
  bool shared_buffers = false;
  bool operator==(const CheckedCall&) const = default;
};
thread_local CheckedCall tl_last_checked;

struct Candidate {
  config::Choice choice;
  double predicted_s = 0;
};

// The candidates to time: the model's first `options.candidates` (all: 0),
// or the named entries, each at the segment the model ranked it with (its
// default where the model did not rank it).
std::vector<Candidate> candidates_for(const detail::CommCore& core, const detail::CollectiveCall& call,
                                      const TuneOptions& options, const std::string& where) {
  const std::vector<coll::Prediction> ranked = core.ranking_for(call);
  std::vector<Candidate> candidates;
  if (options.algorithms.empty()) {
    const std::size_t wanted = options.candidates == 0 ? ranked.size() : std::min(options.candidates, ranked.size());
    for (std::size_t i = 0; i < wanted; ++i)
      candidates.push_back({{std::string(ranked[i].algorithm), ranked[i].segment_bytes}, ranked[i].seconds});
    return candidates;
  }
  const bool commutative = !call.reduces() || call.op.commutative();
  for (const std::string& name : options.algorithms) {
    const coll::Algorithm* entry = coll::find_algorithm(call.collective, name);
    if (!entry)
      throw Error(where + ": unknown algorithm " + name + "; known: " + coll::algorithm_names(call.collective));
    if (entry->arrival != coll::ArrivalOrder::none)
      throw Error(where + ": " + name + " orders by arrival: only auto's static choice can be tuned");
    if (entry->needs_commutative && !commutative)
      throw Error(where + ": " + name + " needs a commutative operator");
    Candidate c{{name, 0}, 0};
    for (const coll::Prediction& p : ranked)
      if (p.algorithm == name) c = {{name, p.segment_bytes}, p.seconds};
    candidates.push_back(std::move(c));
  }
  return candidates;
}

// The trial calls' buffers: this rank's input and output, zeros.
struct TrialCall {
  detail::CollectiveCall shape;
  std::vector<std::byte> input, output;

  TrialCall(const detail::CollectiveCall& call, int ranks) : shape(call) {
    const std::size_t bytes = call.count * size_of(call.type);
    const std::size_t p = static_cast<std::size_t>(ranks);
    input.resize(call.collective == Collective::reduce_scatter ? p * bytes : bytes);
    output.resize(call.collective == Collective::allgather ? p * bytes : bytes);
  }

  Future submit(Communicator& comm, const config::Choice& choice) {
    CollectiveOptions options = shape.options;
    options.algorithm = choice.algorithm;
    options.segment_bytes = choice.segment_bytes;
    const std::size_t n = shape.count;
    switch (shape.collective) {
      case Collective::allreduce:
        return comm.allreduce(input.data(), output.data(), n, shape.type, shape.op, options);
      case Collective::reduce:
        return comm.reduce(input.data(), output.data(), n, shape.type, shape.op, 0, options);
      case Collective::bcast:
        return comm.bcast(output.data(), n, shape.type, 0, options);
      case Collective::allgather:
        return comm.allgather(input.data(), output.data(), n, shape.type, options);
      case Collective::reduce_scatter:
        return comm.reduce_scatter(input.data(), output.data(), n, shape.type, shape.op, options);
    }
    throw Error("earlybird tune: unknown collective");
  }

  double seconds_of(Communicator& comm, const config::Choice& choice) {
    const auto start = std::chrono::steady_clock::now();
    submit(comm, choice).wait();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
};

// Every rank's `values` become their maxima over the ranks.
void agree_on_maxima(Communicator& comm, std::vector<double>& values) {
  comm.allreduce(std::span<double>(values), Op::max).wait();
}

// Returns once every rank has called it (an allreduce completes on a rank
// only after every rank contributed).
void line_up(Communicator& comm) {
  int word = 0;
  comm.allreduce(std::span<int>(&word, 1), Op::max).wait();
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// Each candidate's median over `rounds` rounds of the slowest rank's time.
std::vector<double> timed_medians(Communicator& comm, TrialCall& trial, const std::vector<Candidate>& candidates,
                                  int rounds) {
  const std::size_t n = candidates.size();
  const std::size_t r_count = static_cast<std::size_t>(rounds);
  std::vector<double> samples(n * r_count);  // candidate-major
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937 shuffler(kOrderSeed);
  for (std::size_t r = 0; r < r_count; ++r) {
    std::shuffle(order.begin(), order.end(), shuffler);
    for (std::size_t i : order) {
      line_up(comm);
      samples[i * r_count + r] = trial.seconds_of(comm, candidates[i].choice);
    }
  }
  agree_on_maxima(comm, samples);
  std::vector<double> medians(n);
  for (std::size_t i = 0; i < n; ++i)
    medians[i] = median_of({samples.begin() + static_cast<std::ptrdiff_t>(i * r_count),
                            samples.begin() + static_cast<std::ptrdiff_t>((i + 1) * r_count)});
  return medians;
}

// From each candidate's first timed call: rounds that fill `budget`.
int rounds_for(Communicator& comm, TrialCall& trial, const std::vector<Candidate>& candidates,
               std::chrono::milliseconds budget) {
  std::vector<double> first;
  for (const Candidate& c : candidates) {
    trial.submit(comm, c.choice).wait();  // plans, pages, connections
    first.push_back(trial.seconds_of(comm, c.choice));
  }
  agree_on_maxima(comm, first);
  const double round_s = std::max(1e-9, std::accumulate(first.begin(), first.end(), 0.0));
  const double fit = std::chrono::duration<double>(budget).count() / round_s;
  return static_cast<int>(std::clamp(fit, double{kLeastRounds}, double{kMostRounds}));
}

}  // namespace

std::string summary(const TuneReport& report) {
  std::string text = "tune " + report.collective + " " + std::to_string(report.bytes) + " B (class up to " +
                     std::to_string(report.class_bytes) + " B): ";
  if (report.chosen.empty()) return text + "nothing to measure";
  text += "chose " + report.chosen + " from";
  const char* separator = " ";
  char figures[96];
  for (const TuneTrial& trial : report.trials) {
    std::snprintf(figures, sizeof figures, " %.1f us", trial.measured_s * 1e6);
    text += separator + trial.algorithm + figures;
    if (trial.predicted_s > 0) {
      std::snprintf(figures, sizeof figures, " (model %.1f)", trial.predicted_s * 1e6);
      text += figures;
    }
    separator = ", ";
  }
  return text + "; " + std::to_string(report.rounds) + " rounds";
}

namespace detail {

std::string tune_on_first_use(const std::shared_ptr<CommCore>& core, const CollectiveCall& call) {
  const config::CommOptions& o = core->options();
  if (!o.tune || tl_tuning || call.count == 0 || !leaves_choice_to_auto(call)) return "";
  const CheckedCall checked{core.get(), call.collective, call.count * size_of(call.type), call.op.commutative(),
                            call.options.shared_buffers};
  if (checked == tl_last_checked) return "";  // a loop of one call: its class was claimed at its first turn
  if (core->size() == 1 || call.options.shared_buffers || core->on_progress_thread()) return "";
  tl_last_checked = checked;
  if (!core->claim_tuning(core->size_class_of(call))) return "";
  TuneOptions options;
  options.candidates = o.tune_candidates;
  options.budget = o.tune_budget;
  options.blocking = call.options.blocking;
  try {
    Communicator(core).tune(call.collective, call.count, call.type, call.op, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace detail

TuneReport Communicator::tune(Collective collective, std::size_t count, Datatype type, ReduceOp op,
                              const TuneOptions& options) {
  detail::CommCore& core = checked_core("tune");
  const TuningScope scope;
  CollectiveOptions call_options;
  call_options.blocking = options.blocking;
  const detail::CollectiveCall call(collective, nullptr, nullptr, count, type, std::move(op), 0, call_options, nullptr);
  TuneReport report;
  report.collective = coll::to_string(collective);
  report.bytes = count * size_of(type);
  report.class_bytes = core.size_class_of(call).bytes;
  const std::string where = "earlybird tune(" + report.collective + ", " + std::to_string(report.bytes) +
                            " B) on rank " + std::to_string(rank()) + " of " + std::to_string(size());
  const std::vector<Candidate> candidates = candidates_for(core, call, options, where);  // named ones checked
  if (size() == 1 || count == 0) return report;
  if (candidates.empty()) throw Error(where + ": no algorithm suits this call");
  TrialCall trial(call, size());
  std::vector<double> medians;
  try {
    report.rounds = rounds_for(*this, trial, candidates, options.budget);
    medians = timed_medians(*this, trial, candidates, report.rounds);
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
  const std::size_t winner =
      static_cast<std::size_t>(std::min_element(medians.begin(), medians.end()) - medians.begin());
  for (std::size_t i = 0; i < candidates.size(); ++i)
    report.trials.push_back({candidates[i].choice.algorithm, candidates[i].choice.segment_bytes,
                             candidates[i].predicted_s, medians[i]});
  report.chosen = candidates[winner].choice.algorithm;
  report.chosen_segment_bytes = candidates[winner].choice.segment_bytes;
  if (core.options().verbose && rank() == 0) std::fprintf(stderr, "earlybird: %s\n", summary(report).c_str());
  core.pin(core.size_class_of(call), candidates[winner].choice, report);
  return report;
}

std::vector<TuneReport> Communicator::tune_reports() const { return checked_core("tune_reports").tune_reports(); }

}  // namespace earlybird
