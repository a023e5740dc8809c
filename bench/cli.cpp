// eb-bench's command line on CLI11 (cli.hpp): the subcommands, their options
// with defaults and checks, and the parsers of sizes and lists.
#include "cli.hpp"

#include <CLI/CLI.hpp>
#include <earlybird/collectives/outer_products.hpp>
#include <earlybird/collectives/predict.hpp>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "collective_table.hpp"
#include "pap_config.hpp"

namespace earlybird::bench {
namespace {

// ---- values ----------------------------------------------------------------

// "a,b,,c" -> {"a", "b", "c"}.
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

double parse_number(const std::string& text) { return coll::parse_non_negative(text); }

double suffix_scale(char suffix) {
  switch (suffix) {
    case 'K':
    case 'k':
      return 1024.0;
    case 'M':
    case 'm':
      return 1024.0 * 1024;
    case 'G':
    case 'g':
      return 1024.0 * 1024 * 1024;
    default:
      return 0;
  }
}

// "64K" -> 65536: bytes, with an optional K, M or G suffix (powers of 1024).
std::size_t parse_bytes(const std::string& text) {
  const double scale = text.empty() ? 0 : suffix_scale(text.back());
  const std::string number = scale > 0 ? text.substr(0, text.size() - 1) : text;
  try {
    return static_cast<std::size_t>(parse_number(number) * std::max(scale, 1.0));
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument("bad size '" + text + "' (bytes, with an optional K, M or G suffix)");
  }
}

// "1,2,3" -> {1, 2, 3}: at least one number, each in [lo, hi] (`what` names
// them in the error).
template <typename T>
std::vector<T> parse_numbers(const std::string& text, const std::string& what, double lo, double hi) {
  std::vector<T> out;
  for (const auto& item : split_list(text)) {
    const double value = parse_number(item);
    if (value < lo || value > hi)
      throw std::invalid_argument(what + " must be in [" + std::to_string(static_cast<long long>(lo)) + ", " +
                                  std::to_string(static_cast<long long>(hi)) + "], not " + item);
    out.push_back(static_cast<T>(value));
  }
  if (out.empty()) throw std::invalid_argument("no " + what + " in '" + text + "'");
  return out;
}

// "8:16M" (powers of two from 8 B to 16 MiB) or a list "1K,64K,1M".
std::vector<std::size_t> parse_sizes(const std::string& spec) {
  std::vector<std::size_t> out;
  if (auto colon = spec.find(':'); colon != std::string::npos) {
    const std::size_t lo = parse_bytes(spec.substr(0, colon));
    const std::size_t hi = parse_bytes(spec.substr(colon + 1));
    for (std::size_t b = std::max<std::size_t>(lo, 1); b <= hi; b *= 2) out.push_back(b);
  } else {
    for (const auto& item : split_list(spec)) out.push_back(parse_bytes(item));
  }
  if (out.empty()) throw std::invalid_argument("no sizes in '" + spec + "'");
  return out;
}

// A CLI11 check that passes when `parse` accepts the text.
template <typename Parse>
CLI::Validator accepted_by(Parse parse, const std::string& name) {
  return CLI::Validator(
      [parse](std::string& text) {
        try {
          parse(text);
        } catch (const std::exception& e) {
          return std::string(e.what());
        }
        return std::string();
      },
      "", name);
}

// ---- options ---------------------------------------------------------------

// An option whose text `parse` turns into `out`. The default is parsed the
// same way, and shown in the help; the last of repeated options wins (scripts
// append the user's options to their own).
template <typename T, typename Parse>
CLI::Option* add_parsed(CLI::App& app, const std::string& name, T& out, Parse parse, const std::string& fallback,
                        const std::string& type, const std::string& description) {
  return app
      .add_option_function<std::string>(
          name, [&out, parse](const std::string& text) { out = parse(text); }, description)
      ->default_str(fallback)
      ->force_callback()
      ->check(accepted_by(parse, type))
      ->type_name(type);
}

CLI::Option* add_sizes(CLI::App& app, std::vector<std::size_t>& sizes, const std::string& fallback) {
  return add_parsed(
      app, "--sizes", sizes, parse_sizes, fallback, "BYTES",
      "bytes per rank (K, M, G: powers of 1024), BYTES / 4 float32 elements: a list 1K,64K,1M or a range 8:16M "
      "(powers of two)");
}

CLI::Option* add_list(CLI::App& app, const std::string& name, std::vector<std::string>& out,
                      const std::string& fallback, const std::string& description) {
  return add_parsed(app, name, out, split_list, fallback, "LIST", description);
}

// A CLI11 check that the text is a number of at least `minimum` (a whole number).
CLI::Validator at_least(int minimum) {
  return accepted_by(
      [minimum](const std::string& text) {
        if (parse_number(text) < minimum)
          throw std::invalid_argument(text + " is less than " + std::to_string(minimum));
      },
      "");
}

// A number option checked by `check` (at_least(1), ...), default shown.
template <typename T>
CLI::Option* add_number(CLI::App& app, const std::string& name, T& out, const CLI::Validator& check,
                        const std::string& description) {
  return app.add_option(name, out, description)->check(check)->capture_default_str();
}

void add_csv(CLI::App& app, JobOptions& options) {
  app.add_option("--csv", options.csv, "write the result rows to this CSV file (rank 0)")->type_name("FILE");
}

std::vector<double> parse_delays(const std::string& text) {
  std::vector<double> out;
  for (const auto& item : split_list(text)) out.push_back(parse_number(item));
  if (out.empty()) throw std::invalid_argument("no delays in '" + text + "'");
  return out;
}

// A parser of lists whose every item is one of `known` ("a,b,c"), naming
// `what` in its errors.
auto one_of(std::string what, std::string known) {
  return [what, known](const std::string& text) {
    std::vector<std::string> out = split_list(text);
    const std::vector<std::string> allowed = split_list(known);
    for (const auto& item : out)
      if (std::find(allowed.begin(), allowed.end(), item) == allowed.end())
        throw std::invalid_argument("unknown " + what + " '" + item + "' (one of " + known + ")");
    if (out.empty()) throw std::invalid_argument("no " + what + "s in '" + text + "'");
    return out;
  };
}

void add_sweep(CLI::App& app, SweepOptions& o) {
  CLI::App* sweep = app.add_subcommand(
      "sweep", "latency per size and algorithm of one collective vs the MPI library's (default and forced)");
  sweep->add_option("--collective", o.collective, "the collective timed")
      ->check(CLI::IsMember(collective_names()))
      ->capture_default_str();
  add_sizes(*sweep, o.sizes, "8:16M");
  add_list(*sweep, "--algorithms", o.algorithms, "auto",
           "earlybird algorithms: names from the catalogue, auto (earlybird chooses), all (auto and every "
           "algorithm of the collective) or none (time MPI only)");
  add_list(*sweep, "--mpi-algorithms", o.mpi_algorithms, "",
           "also time MPI with each Open MPI coll_tuned algorithm forced: all, or numbers / names as ompi_info "
           "lists them (1,4 or basic_linear,ring); not given: MPI's default choice only");
  add_number(*sweep, "--budget", o.budget_s, at_least(0),
             "seconds of timing per contender and size (5 to 400 iterations)")
      ->type_name("SECONDS");
  add_parsed(*sweep, "--segment", o.segment_bytes, parse_bytes, "0", "BYTES",
             "segment size passed to every earlybird algorithm; 0: each algorithm's default");
  add_number(*sweep, "--fanout", o.fanout, at_least(0),
             "fan-out passed to every earlybird algorithm; 0: each algorithm's default");
  add_number(*sweep, "--back-to-back", o.back_to_back, at_least(1),
             "calls timed together per sample after one barrier, reported per call (a loop of calls, as an "
             "application issues them; only the last call's result is checked); 1: a barrier before every call");
  add_number(*sweep, "--gap-us", o.gap_us, at_least(0),
             "every rank sleeps this long before each sample's barrier, so that calls come after idle time, as "
             "after an application's computation (not counted in --budget); 0: samples one after another");
  add_number(*sweep, "--root", o.root, at_least(0), "the root of reduce and bcast (a rank of the job)");
  sweep->add_flag("--in-place", o.in_place,
                  "every call in place, for earlybird and MPI alike (MPI_IN_PLACE): allreduce, reduce (on the root), "
                  "allgather (this rank's block) and reduce_scatter (the result in the first block) take their input "
                  "from the output buffer; a bcast always does");
  sweep->add_flag("--shared-buffers", o.shared_buffers,
                  "every rank's input and output from earlybird::allocate_shared, for earlybird and MPI alike (on one "
                  "node the peer_reads algorithms then load straight from the peers' buffers); earlybird's calls set "
                  "CollectiveOptions::shared_buffers");
  sweep->add_flag("--futures", o.futures,
                   "submit earlybird's calls as plain futures (without CollectiveOptions::blocking: a call of "
                   "more than 64 KiB goes to the progress thread) before waiting for each");
  add_number(*sweep, "--tuned", o.tune, at_least(-1),
             "add a row 'tuned': auto on a communicator of its own, on which Communicator::tune timed this many "
             "of the model's fastest candidates before each size (0: every entry the model ranks) and pinned the "
             "fastest; -1: no such row (not --tune: Open MPI's MPI_Init reads that from every program's arguments as a parameter file)");
  add_number(*sweep, "--tune-budget", o.tune_budget_s, at_least(0),
             "seconds Communicator::tune spends on its timed calls per size (TuneOptions::budget)")
      ->type_name("SECONDS");
  add_csv(*sweep, o);
}

void add_overlap(CLI::App& app, OverlapOptions& o) {
  CLI::App* overlap = app.add_subcommand(
      "overlap", "IMB-NBC overlap of an earlybird allreduce future + compute + wait vs MPI_Iallreduce");
  add_sizes(*overlap, o.sizes, "64K,256K,1M,4M");
  overlap->add_option("--algorithm", o.algorithm, "earlybird allreduce algorithm (auto: earlybird chooses)")
      ->capture_default_str();
  add_number(*overlap, "--iters", o.iterations, at_least(1), "iterations per measurement");
  add_csv(*overlap, o);
}

void add_pap(CLI::App& app, PapOptions& o) {
  CLI::App* pap = app.add_subcommand(
      "pap",
      "arrival-pattern allreduce (Proficz 2018): mean time over ranks, speedup over ring, share of the "
      "possible saving captured");
  add_parsed(*pap, "--modes", o.modes, one_of("mode", "one-late,rand-late"), "one-late,rand-late", "LIST",
             "arrival patterns");
  add_parsed(*pap, "--delays", o.delays_ms, parse_delays, "0,1,5,10,50,100,500,1000", "LIST", "maximum delays in ms");
  add_sizes(*pap, o.sizes, "4M");
  add_list(*pap, "--algorithms", o.algorithms, "all",
           "all, or names from " + CLI::detail::join(pap::all_algorithms(), ", ") +
               " (mpi: MPI_Allreduce); ring is always added, first");
  add_number(*pap, "--iters", o.iterations, at_least(1), "iterations per (mode, size, delay)");
  add_number(*pap, "--baseline-iters", o.baseline_iterations, at_least(1),
             "repetitions of each Delta and delta measurement");
  add_number(*pap, "--seed", o.seed, at_least(0), "seeds the inputs and the rand-late delays");
  add_csv(*pap, o);
}

void add_warmup(CLI::App& app, WarmupOptions& o) {
  CLI::App* warmup = app.add_subcommand(
      "warmup",
      "the first allreduce on a fresh communicator vs warm calls: earlybird without and with warm_up(), and MPI "
      "(MPI_Comm_dup + MPI_Allreduce)");
  add_sizes(*warmup, o.sizes, "8,1M");
  add_number(*warmup, "--communicators", o.communicators, at_least(1),
             "fresh communicators per contender and size (the first call is timed on each)");
  add_number(*warmup, "--iters", o.iterations, at_least(1), "warm calls timed on each communicator after its first");
  add_number(*warmup, "--gap-us", o.gap_us, at_least(0),
             "every rank sleeps this long before each timed call's barrier, the first and the warm ones alike, so "
             "that both are calls after the same idle time (0: warm calls back to back)");
  warmup->add_option("--algorithm", o.algorithm, "earlybird allreduce algorithm (auto: earlybird chooses)")
      ->capture_default_str();
  add_parsed(*warmup, "--contenders", o.contenders, one_of("contender", "earlybird,earlybird+warm_up,mpi"),
             "earlybird,earlybird+warm_up,mpi", "LIST",
             "which run, in this order; one alone with --communicators 1 in a fresh job times the process's first "
             "call");
  add_csv(*warmup, o);
}

coll::CostModel parse_model(const std::string& text) {
  std::vector<double> out;
  for (const auto& item : split_list(text)) out.push_back(parse_number(item));
  if (out.size() < 3 || out.size() > 4)
    throw std::invalid_argument("the model is alpha,beta,gamma[,copy] (s, s/B, s/B, s/B), not '" + text + "'");
  for (double v : out)
    if (!(v >= 0)) throw std::invalid_argument("model values must be >= 0 in '" + text + "'");
  coll::CostModel model{out[0], out[1], out[2]};
  if (out.size() > 3) model.copy_per_byte = out[3];
  return model;
}

void add_model(CLI::App& app, coll::CostModel& model) {
  add_parsed(app, "--model", model, parse_model, "1.5e-6,6.25e-11,2e-10", "ALPHA,BETA,GAMMA[,COPY]",
             "seconds per transfer, per byte sent, per byte reduced[, per byte copied: gamma if not given]; the "
             "default is seed 003's machine");
}

void add_simulate(CLI::App& app, SimulateOptions& o) {
  CLI::App* simulate = app.add_subcommand(
      "simulate",
      "runs one algorithm's schedule event by event under a Hockney model (no MPI, no mpirun): predicted time per "
      "rank and the critical path");
  simulate->add_option("--collective", o.collective, "the collective")
      ->check(CLI::IsMember(collective_names()))
      ->capture_default_str();
  simulate->add_option("--algorithm", o.algorithm, "catalogue name")->capture_default_str();
  add_number(*simulate, "--ranks", o.ranks, CLI::Range(1, 1 << 20), "P");
  add_parsed(*simulate, "--bytes", o.bytes, parse_bytes, "1M", "BYTES",
             "bytes per rank (per block for allgather and reduce_scatter), float32 elements");
  add_model(*simulate, o.model);
  add_number(*simulate, "--node-ranks", o.node_ranks, at_least(0),
             "ranks per node (consecutive ranks; must divide P): --model is then the network level, transfers "
             "inside a node cost --node-model, and each node's ranks share one network link each way; 0: one level");
  add_parsed(*simulate, "--node-model", o.node_model, [](const std::string& text) {
    auto values = parse_numbers<double>(text, "the node level's alpha and beta", 0, 1);
    if (values.size() != 2) throw std::invalid_argument("--node-model is ALPHA,BETA (s, s/B), not '" + text + "'");
    return values;
  }, "1.46e-7,1.05e-10", "ALPHA,BETA", "the node level's seconds per transfer and per byte (with --node-ranks)");
  simulate->add_flag("--transfers-on-cpu", o.transfers_on_cpu,
                     "transfers (inside a node, with --node-ranks) are copies on the sending rank's core, as in "
                     "shared memory: they hold its CPU as well as the ports");
  simulate->add_option("--arrivals", o.arrivals,
                       "one-late:MS (the last rank MS late), rand-late:MS (each rank uniform in [0, MS]) or a file "
                       "of one arrival time in ms per rank; not given: all at 0")
      ->type_name("PATTERN");
  add_number(*simulate, "--seed", o.seed, at_least(0), "seeds rand-late");
  add_parsed(*simulate, "--segment", o.segment_bytes, parse_bytes, "0", "BYTES",
             "segment size for pipelined algorithms; 0: the algorithm's default");
  add_number(*simulate, "--fanout", o.fanout, at_least(0), "fan-out of k-ary trees; 0: the algorithm's default");
  add_number(*simulate, "--path-steps", o.path_steps, at_least(0), "critical-path steps printed (the last ones)");
  simulate->add_flag("--per-rank", o.per_rank,
                     "run rank 0's plan alone, every rank taken to run the same timeline (coll::simulate_symmetric): "
                     "for P whose whole schedule is too large to build; exact for rank-symmetric schedules (the ring "
                     "family when P divides the count, butterflies at powers of two), one level, no --arrivals");
  add_csv(*simulate, o);
}

void add_suara_table(CLI::App& app, SuaraTableOptions& o) {
  CLI::App* suara = app.add_subcommand(
      "suara",
      "SUARA (seed 003) in the schedule simulator (no MPI, no mpirun): the grid suara_grid chooses against every "
      "flat candidate, per P and size, as a markdown table");
  add_parsed(*suara, "--ranks", o.ranks, [](const std::string& text) {
    return parse_numbers<int>(text, "P", 1, 1 << 20);
  }, "64,256,1024,4096,16384", "LIST", "P values");
  add_sizes(*suara, o.sizes, "8,512,8K,64K,1M,16M,64M");
  add_model(*suara, o.model);
  add_csv(*suara, o);
}

void add_plan_build(CLI::App& app, PlanBuildOptions& o) {
  CLI::App* plans = app.add_subcommand(
      "plans",
      "one rank's plan-building time (no MPI, no mpirun): plan_for_rank for ranks 0, P/2 and P-1, and the whole "
      "schedule's build and projection beside it up to --whole-up-to ranks, as a markdown table");
  plans->add_option("--collective", o.collective, "the collective")
      ->check(CLI::IsMember(collective_names()))
      ->capture_default_str();
  add_parsed(*plans, "--ranks", o.ranks, [](const std::string& text) {
    return parse_numbers<int>(text, "P", 1, 1 << 20);
  }, "1024,4096,16384", "LIST", "P values");
  add_list(*plans, "--algorithms", o.algorithms, "ring,segmented_ring,recursive_doubling,rabenseifner",
           "names from the collective's catalogue (allreduce: " + coll::algorithm_names(coll::Collective::allreduce) +
               ")");
  add_sizes(*plans, o.sizes, "4M");
  add_number(*plans, "--whole-up-to", o.whole_up_to, at_least(0),
             "largest P whose whole schedule is built and projected too");
  add_number(*plans, "--node-ranks", o.node_ranks, at_least(0),
             "ranks per node, consecutive (the hierarchical entry's layout; must divide every P); 0: one node");
  add_csv(*plans, o);
}

void add_calibrate(CLI::App& app, CalibrateOptions& o) {
  CLI::App* calibrate = app.add_subcommand(
      "calibrate",
      "measures the cost model's alpha, beta, gamma, copy, per_step and per_call for this level, writes the profile "
      "EARLYBIRD_PROFILE reads, and checks predictions against measured times");
  calibrate->add_option("--output", o.output, "profile file written by rank 0 (empty: none)")->capture_default_str();
  calibrate->add_option("--level", o.level, "node or network; default: node when every rank shares one node")
      ->check(CLI::IsMember({"node", "network"}));
  add_number(*calibrate, "--budget", o.budget_s, at_least(0), "seconds of timing per algorithm and size");
  add_sizes(*calibrate, o.validate_sizes, "8,4K,64K,1M,16M");  // validation sizes
  add_list(*calibrate, "--validate", o.validate_algorithms,
           "ring,rabenseifner,binomial,recursive_doubling,arrival_chain,peer_reads,inline_flags",
           "algorithms whose measured time is compared with the model's prediction (--sizes: at which sizes; "
           "none: skip)");
}

void add_dsop(CLI::App& app, DsopOptions& o) {
  CLI::App* dsop = app.add_subcommand(
      "dsop",
      "sum of outer products (seed 004): every algorithm of Communicator::sum_outer_products against the local "
      "product + MPI_Allreduce of the matrix, float32, with the model's predictions");
  add_parsed(*dsop, "--dims", o.dims, [](const std::string& text) {
    return parse_numbers<std::size_t>(text, "dimension", 0, 1e15);
  }, "1000,2000,4000", "LIST", "N = M of the matrices");
  add_list(*dsop, "--algorithms", o.algorithms, "all",
           "all, or names from " + coll::outer_product_algorithm_names() + ", auto");
  add_number(*dsop, "--iters", o.iterations, at_least(1), "timed calls per algorithm and size (after one untimed)");
  add_csv(*dsop, o);
}

// Whether this process prints: rank 0 of an mpirun launch, or a process
// started without one.
bool prints_messages() {
  for (const char* variable : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char* rank = std::getenv(variable)) return std::string(rank) == "0";
  return true;
}

std::string joined(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) out += (i ? " " : "") + std::string(argv[i]);
  return out;
}

// A first argument that is neither an option nor a job (CLI11 would only say
// that a subcommand is required).
void reject_unknown_job(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return;
  std::string jobs;
  for (const CLI::App* job : app.get_subcommands({})) {
    if (job->get_name() == argv[1]) return;
    jobs += (jobs.empty() ? "" : ", ") + job->get_name();
  }
  throw CLI::ValidationError("job", "unknown job '" + std::string(argv[1]) + "' (" + jobs + ")");
}

// The help or the error message, then the exit code: 0 after --help, 1 on a
// bad command line.
int report_parse_error(const CLI::App& app, const CLI::ParseError& e) {
  std::ostringstream ignored;
  const bool prints = prints_messages();
  const bool help = e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success);
  if (prints && !help) std::cerr << "eb-bench: ";
  app.exit(e, prints ? std::cout : ignored, prints ? std::cerr : ignored);
  return help ? 0 : 1;
}

}  // namespace

CommandLine parse_command_line(int argc, char** argv) {
  SweepOptions sweep;
  OverlapOptions overlap;
  PapOptions pap;
  WarmupOptions warmup;
  SimulateOptions simulate;
  SuaraTableOptions suara;
  PlanBuildOptions plans;
  CalibrateOptions calibrate;
  DsopOptions dsop;
  CLI::App app("earlybird's benchmarks; run under mpirun: mpirun -np P eb-bench <job> [options]", "eb-bench");
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.require_subcommand(1);
  add_sweep(app, sweep);
  add_overlap(app, overlap);
  add_pap(app, pap);
  add_warmup(app, warmup);
  add_simulate(app, simulate);
  add_suara_table(app, suara);
  add_plan_build(app, plans);
  add_calibrate(app, calibrate);
  add_dsop(app, dsop);
  try {
    reject_unknown_job(app, argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return {std::nullopt, report_parse_error(app, e)};
  }
  for (JobOptions* job : {static_cast<JobOptions*>(&sweep), static_cast<JobOptions*>(&overlap),
                          static_cast<JobOptions*>(&pap), static_cast<JobOptions*>(&warmup),
                          static_cast<JobOptions*>(&simulate), static_cast<JobOptions*>(&suara),
                          static_cast<JobOptions*>(&plans), static_cast<JobOptions*>(&calibrate),
                          static_cast<JobOptions*>(&dsop)})
    job->command_line = joined(argc, argv);
  if (app.got_subcommand("sweep")) return {JobRequest(std::move(sweep)), 0};
  if (app.got_subcommand("overlap")) return {JobRequest(std::move(overlap)), 0};
  if (app.got_subcommand("warmup")) return {JobRequest(std::move(warmup)), 0};
  if (app.got_subcommand("simulate")) return {JobRequest(std::move(simulate)), 0};
  if (app.got_subcommand("suara")) return {JobRequest(std::move(suara)), 0};
  if (app.got_subcommand("plans")) return {JobRequest(std::move(plans)), 0};
  if (app.got_subcommand("calibrate")) return {JobRequest(std::move(calibrate)), 0};
  if (app.got_subcommand("dsop")) return {JobRequest(std::move(dsop)), 0};
  return {JobRequest(std::move(pap)), 0};
}

}  // namespace earlybird::bench
