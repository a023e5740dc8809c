// doctest's runner and main(), compiled once and linked into every doctest
// executable (unit, sim, faults): compiled into each test file it cost ~8 s
// per file at -O2 -g and ~17 s under ASan+UBSan.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
