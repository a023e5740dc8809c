#!/usr/bin/env python3
"""Issue 12's criterion from eb-bench sweep CSVs: per collective, P and size,
the fastest earlybird algorithm of the row and how far `auto` (and `tuned`,
when the sweep ran with --tuned) is from it: median / fastest median, same
run. Rows of MPI contenders are ignored; a row where any earlybird entry was
wrong is flagged.

Usage: bench/auto_margin.py SWEEP.csv [MORE.csv ...] [--limit 1.10]
"""
import argparse
import csv
from collections import defaultdict

CHOOSERS = ("auto", "tuned")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+")
    parser.add_argument("--limit", type=float, default=1.10, help="the margin counted as a miss above it")
    args = parser.parse_args()
    rows = defaultdict(dict)  # (collective, ranks, bytes) -> {algorithm: (median, wrong)}
    for path in args.csv:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row.get("job", "sweep") != "sweep" or row["implementation"] != "earlybird":
                    continue
                key = (row["collective"], int(row["ranks"]), int(row["bytes"]))
                rows[key][row["algorithm"]] = (float(row["median_s"]), int(row["wrong"]))
    misses = defaultdict(int)
    print(f"{'collective':<15}{'P':>3}{'bytes':>10}  {'fastest':<26}{'us':>10}" +
          "".join(f"{c + '/fastest':>16}" for c in CHOOSERS))
    for (collective, ranks, size), entries in sorted(rows.items()):
        catalogue = {a: v for a, v in entries.items() if a not in CHOOSERS}
        if not catalogue:
            continue
        fastest = min(catalogue, key=lambda a: catalogue[a][0])
        line = f"{collective:<15}{ranks:>3}{size:>10}  {fastest:<26}{catalogue[fastest][0] * 1e6:>10.2f}"
        for chooser in CHOOSERS:
            if chooser not in entries:
                line += f"{'-':>16}"
                continue
            ratio = entries[chooser][0] / catalogue[fastest][0]
            miss = ratio > args.limit
            misses[chooser] += miss
            line += f"{ratio:>15.2f}{'*' if miss else ' '}"
        if any(wrong for _, wrong in entries.values()):
            line += "  WRONG RESULTS"
        print(line)
    for chooser in CHOOSERS:
        print(f"# {chooser}: {misses[chooser]} rows above {args.limit}x the fastest (* above)")


if __name__ == "__main__":
    main()
