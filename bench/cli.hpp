// eb-bench's command line (CLI11): a subcommand per job, each with its own
// --help; unknown options and bad values are errors. Every rank parses the
// same arguments before MPI starts, so every rank reaches the same verdict
// and a bad command line ends all of them, with no MPI communication; only
// the launch's rank 0 prints the help or the error.
#pragma once

#include <optional>
#include <variant>

#include "jobs.hpp"

namespace earlybird::bench {

using JobRequest =
    std::variant<SweepOptions, OverlapOptions, PapOptions, WarmupOptions, SimulateOptions, SuaraTableOptions,
                 PlanBuildOptions, CalibrateOptions, DsopOptions>;

struct CommandLine {
  std::optional<JobRequest> job;  // none: exit with exit_code (help shown, or an error)
  int exit_code = 0;
};

CommandLine parse_command_line(int argc, char** argv);

}  // namespace earlybird::bench
