#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every tier.
#   1. RelWithDebInfo build: unit, sim, mpi, pmpi, consumer, faults, then multihost (emulated
#      hosts, scripts/cluster.sh; skipped with the reason when not root)
#   2. AddressSanitizer + UndefinedBehaviorSanitizer build: unit, sim, fuzz, mpi
#   3. ThreadSanitizer build: sim
# Usage: tests/run.sh [--quick]   (--quick: step 1 only)
set -euo pipefail
source "$(dirname "$0")/../scripts/setup.sh"
cd "$EB_ROOT"
eb_deps
eb_mpi_env

phase() { echo "== $* ($(date -u +%T))"; }  # clock times show where CI's minutes go

run_tiers() {  # DIR LABEL...
  local dir="$1"
  shift
  for label in "$@"; do
    phase "$(basename "$dir"): $label tier"
    ctest --test-dir "$dir" -L "^${label}\$" --output-on-failure -j 2
  done
}

phase "build: build"
eb_build build
run_tiers build unit sim mpi pmpi consumer faults
[ "$(id -u)" -eq 0 ] && trap 'scripts/cluster.sh down >/dev/null 2>&1 || true' EXIT
phase "build: multihost tier"
ctest --test-dir build -L '^multihost$' --output-on-failure  # one testbed: one test at a time
[ "${1:-}" = "--quick" ] && exit 0

# The sanitized builds compile at -O1 with line tables only (-g1): enough for
# the sanitizers' stack traces, and ASan+UBSan at -O2 -g took ~2.7x longer to
# compile. Only the targets their tiers run are built.
sanitized=(-DEARLYBIRD_BENCH=OFF -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"
           -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG")
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
phase "build-asan: build"
eb_build build-asan -DEARLYBIRD_SANITIZE=address,undefined "${sanitized[@]}" \
  --target unit_tests --target sim_tests --target fuzz_api --target mpi_tests
# Open MPI's own allocations are never freed before exit: leak checking is for
# earlybird's tiers without MPI only.
ASAN_OPTIONS=detect_leaks=1 run_tiers build-asan unit sim fuzz
ASAN_OPTIONS=detect_leaks=0 run_tiers build-asan mpi

phase "build-tsan: build"
eb_build build-tsan -DEARLYBIRD_SANITIZE=thread "${sanitized[@]}" --target sim_tests
TSAN_OPTIONS="halt_on_error=1 ignore_noninstrumented_modules=1 suppressions=$EB_ROOT/tests/tsan.supp" run_tiers build-tsan sim
phase "done"
