// eb-sgd: data-parallel training of a small MLP (model.hpp) where ranks'
// step times differ, the gradients allreduced four ways: MPI_Allreduce
// after the backward pass; earlybird's ring after the backward pass;
// earlybird's auto_pap after the backward pass, with the compute reporting
// its progress (phase_begin / edge / phase_end) so early ranks can reduce
// among themselves; and an earlybird partitioned allreduce whose parts (one
// per layer) are readied as the backward pass finishes them. Prints, per
// imbalance, the time per epoch, the reduction's tail after the backward
// pass and the test loss and accuracy per epoch, and checks that every form
// learns (loss falls) to the same quality as MPI_Allreduce (exit status 1
// if not). Every rank keeps its own copy of the model; they stay identical
// because every rank receives the same summed gradient.
//
//   mpirun -n 2 eb-sgd [--epochs 6] [--samples 2048] [--batch 32] [--width 128]
//                      [--lr 1] [--imbalance none,one-late:1,rand-late:1]
// --imbalance: a comma-separated list; one-late:D makes the last rank
// compute D ms longer per step, rand-late:D each rank a uniform 0..D ms
// longer (drawn per step and rank, the same draws for every form); half the
// extra time before the forward pass, half before the backward pass.
#include "../common/machine_line.hpp"
#include "../common/options.hpp"
#include "model.hpp"

#include <earlybird/runtime.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Config {
  int epochs = 6;
  std::size_t samples = 2048;  // per rank
  std::size_t batch = 32;      // per rank
  std::size_t width = 128;
  float learning_rate = 1.0f;
  std::vector<std::string> imbalances;
};

struct Imbalance {
  std::string kind = "none";  // none, one-late, rand-late
  double ms = 0;
  std::string text;
  // Extra compute time of `rank` at (epoch, step), in ms.
  double delay_ms(int rank, int ranks, int epoch, std::size_t step) const {
    if (kind == "one-late") return rank == ranks - 1 ? ms : 0.0;
    if (kind != "rand-late") return 0.0;
    std::seed_seq seed{static_cast<unsigned>(rank), static_cast<unsigned>(epoch), static_cast<unsigned>(step)};
    std::mt19937 g(seed);
    return std::uniform_real_distribution<double>(0.0, ms)(g);
  }
};

Imbalance parse_imbalance(const std::string& text) {
  Imbalance imbalance;
  imbalance.text = text;
  const auto colon = text.find(':');
  imbalance.kind = text.substr(0, colon);
  if (imbalance.kind == "none") return imbalance;
  if ((imbalance.kind != "one-late" && imbalance.kind != "rand-late") || colon == std::string::npos)
    throw std::invalid_argument("--imbalance: expected none, one-late:MS or rand-late:MS, got '" + text + "'");
  imbalance.ms = std::stod(text.substr(colon + 1));
  return imbalance;
}

Config read_config(int argc, char** argv) {
  examples::Options options(argc, argv);
  Config c;
  c.epochs = static_cast<int>(options.integer("epochs", c.epochs));
  c.samples = static_cast<std::size_t>(options.integer("samples", static_cast<long>(c.samples)));
  c.batch = static_cast<std::size_t>(options.integer("batch", static_cast<long>(c.batch)));
  c.width = static_cast<std::size_t>(options.integer("width", static_cast<long>(c.width)));
  c.learning_rate = static_cast<float>(options.number("lr", c.learning_rate));
  const std::string list = options.text("imbalance", "none,one-late:1,rand-late:1");
  options.no_others();
  c.imbalances.clear();
  std::stringstream items(list);
  for (std::string item; std::getline(items, item, ',');) c.imbalances.push_back(item);
  if (c.epochs < 1 || c.samples < c.batch || c.batch < 1 || c.width < 1)
    throw std::invalid_argument("--epochs, --batch and --width must be positive, --samples at least --batch");
  return c;
}

enum class Form { mpi, ring, auto_pap, partitioned };
constexpr Form kForms[] = {Form::mpi, Form::ring, Form::auto_pap, Form::partitioned};
const char* name_of(Form form) {
  switch (form) {
    case Form::mpi: return "MPI_Allreduce";
    case Form::ring: return "earlybird ring";
    case Form::auto_pap: return "earlybird auto_pap";
    case Form::partitioned: return "earlybird partitioned";
  }
  return "?";
}

struct Run {
  double initial_loss = 0;
  std::vector<double> loss, accuracy;  // test set, after each epoch
  double epoch_ms = 0;                 // mean over epochs, rank 0
  double tail_us = 0;                  // backward end -> gradient reduced, mean over steps and ranks
};

using Clock = std::chrono::steady_clock;
double micros_since(Clock::time_point t) { return std::chrono::duration<double, std::micro>(Clock::now() - t).count(); }

// One step's reduction of `gradient` (sum over ranks), after the backward
// pass; the partitioned form only waits for what its parts started.
void reduce_after_backward(Form form, earlybird::Communicator& world, std::vector<float>& gradient,
                           earlybird::PartitionedCollective& parts) {
  earlybird::CollectiveOptions options;
  options.blocking = true;  // waited for at once below: run it on this thread
  switch (form) {
    case Form::mpi:
      MPI_Allreduce(MPI_IN_PLACE, gradient.data(), static_cast<int>(gradient.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      return;
    case Form::ring: options.algorithm = "ring"; break;
    case Form::auto_pap:
      world.phase_end();
      options.algorithm = "auto_pap";
      break;
    case Form::partitioned: parts.future().wait(); return;
  }
  world.allreduce(std::span<float>(gradient), earlybird::Op::sum, options).wait();
}

Run train(Form form, const Imbalance& imbalance, const Config& config, earlybird::Communicator& world,
          const sgd::Samples& data, const sgd::Samples& test) {
  const int rank = world.rank(), ranks = world.size();
  sgd::Mlp model({data.features, config.width, config.width, 1}, 42);
  std::vector<float> gradient(model.parameter_count());
  Run run;
  double accuracy = 0;
  model.evaluate(test, run.initial_loss, accuracy);
  const std::size_t steps = config.samples / config.batch;
  double tail_sum = 0, epoch_sum = 0;
  for (int epoch = 0; epoch < config.epochs; ++epoch) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto epoch_start = Clock::now();
    for (std::size_t step = 0; step < steps; ++step) {
      const double delay_ms = imbalance.delay_ms(rank, ranks, epoch, step);
      earlybird::PartitionedCollective parts;
      if (form == Form::auto_pap) world.phase_begin();
      if (form == Form::partitioned)
        parts = world.allreduce_partitioned(std::span<float>(gradient), earlybird::Op::sum, model.part_counts());
      auto pause = [&](int before) {
        if (before == 0 && form == Form::auto_pap) world.edge(0.5);
        if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(delay_ms / 2));
      };
      auto part_done = [&](std::size_t part) { parts.ready(part); };
      model.loss_and_gradient(data, step * config.batch, config.batch, &gradient,
                              form == Form::partitioned ? std::function<void(std::size_t)>(part_done) : nullptr, pause);
      const auto backward_end = Clock::now();
      reduce_after_backward(form, world, gradient, parts);
      tail_sum += micros_since(backward_end);
      const float scale = config.learning_rate / static_cast<float>(ranks);
      auto& params = model.parameters();
      for (std::size_t i = 0; i < params.size(); ++i) params[i] -= scale * gradient[i];
    }
    epoch_sum += micros_since(epoch_start) / 1000.0;
    double loss = 0;
    model.evaluate(test, loss, accuracy);
    run.loss.push_back(loss);
    run.accuracy.push_back(accuracy);
  }
  run.epoch_ms = epoch_sum / config.epochs;
  double mean_tail = tail_sum / static_cast<double>(steps * static_cast<std::size_t>(config.epochs));
  MPI_Allreduce(MPI_IN_PLACE, &mean_tail, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  run.tail_us = mean_tail / ranks;
  return run;
}

void print_header(const Config& config, const sgd::Mlp& model, int ranks, int local_ranks) {
  std::printf("eb-sgd: MLP 32-%zu-%zu-1 (%zu parameters, %zu parts), %zu samples and batch %zu per rank, %d epochs, lr %g\n",
              config.width, config.width, model.parameter_count(), model.part_counts().size(), config.samples,
              config.batch, config.epochs, static_cast<double>(config.learning_rate));
  examples::print_machine_line(ranks, local_ranks);
}

// Learns (test loss falls by 10 % or more) and ends within 0.03 of the
// accuracy and 0.02 of the test loss MPI_Allreduce's run reached (the sums'
// rounding differs between algorithms, nothing else).
bool learned(const Run& run, const Run& reference) {
  return run.loss.back() < 0.9 * run.initial_loss && std::abs(run.accuracy.back() - reference.accuracy.back()) <= 0.03 &&
         std::abs(run.loss.back() - reference.loss.back()) <= 0.02;
}

}  // namespace

int main(int argc, char** argv) {
  earlybird::Runtime runtime(&argc, &argv);
  bool all_learned = true;
  {
    earlybird::Communicator world = runtime.world();
    Config config;
    try {
      config = read_config(argc, argv);
      for (const auto& text : config.imbalances) parse_imbalance(text);
    } catch (const std::exception& e) {
      if (world.rank() == 0) std::fprintf(stderr, "eb-sgd: %s\n", e.what());
      return 2;
    }
    constexpr std::size_t kFeatures = 32;
    const sgd::Samples data = sgd::make_samples(kFeatures, config.samples, 1000 + static_cast<std::uint64_t>(world.rank()));
    const sgd::Samples test = sgd::make_samples(kFeatures, 2048, 7);
    if (world.rank() == 0)
      print_header(config, sgd::Mlp({kFeatures, config.width, config.width, 1}, 42), world.size(), runtime.local_ranks());
    for (const auto& text : config.imbalances) {
      const Imbalance imbalance = parse_imbalance(text);
      std::vector<Run> runs;
      for (Form form : kForms) runs.push_back(train(form, imbalance, config, world, data, test));
      if (world.rank() != 0) {
        for (const Run& run : runs) all_learned = all_learned && learned(run, runs[0]);
        continue;
      }
      std::printf("\nimbalance %s\n%-24s %11s %16s %8s  %s\n", imbalance.text.c_str(), "form", "epoch (ms)",
                  "tail (us)", "accuracy", "test loss: start, after each epoch");
      for (std::size_t f = 0; f < runs.size(); ++f) {
        const Run& run = runs[f];
        std::printf("%-24s %11.1f %16.1f %8.3f  %.3f", name_of(kForms[f]), run.epoch_ms, run.tail_us,
                    run.accuracy.back(), run.initial_loss);
        for (double loss : run.loss) std::printf(" %.3f", loss);
        std::printf("\n");
        const bool ok = learned(run, runs[0]);
        all_learned = all_learned && ok;
        if (!ok) std::printf("  ^ FAILED: the loss did not fall by 10 %%, or accuracy or loss are off MPI_Allreduce's\n");
      }
      std::printf("tail: from the end of the backward pass to the summed gradient, mean over steps and ranks\n");
    }
    if (world.rank() == 0) std::printf("\ncheck: %s\n", all_learned ? "ok" : "FAILED");
  }
  return all_learned ? 0 : 1;
}
