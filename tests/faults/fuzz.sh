#!/usr/bin/env bash
# The long fuzzing run (issue 14): fuzz_api over CASES seeded cases from SEED,
# in the AddressSanitizer + UBSan build (built here if missing).
#   tests/faults/fuzz.sh [CASES] [SEED]      default 100000 from 1
set -euo pipefail
source "$(dirname "$0")/../../scripts/setup.sh"
cd "$EB_ROOT"
eb_deps
eb_build build-asan -DEARLYBIRD_SANITIZE=address,undefined -DEARLYBIRD_BENCH=OFF --target fuzz_api
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1
exec build-asan/tests/faults/fuzz_api --cases "${1:-100000}" --seed "${2:-1}"
