#!/usr/bin/env python3
"""Draws eb-bench CSVs (sweep and pap rows; other jobs are ignored).

sweep: one PNG per collective and P (DIR/sweep-<collective>-P<P>.png), latency
(median of the slowest rank) against message size on log-log axes. One solid
line per earlybird algorithm, MPI's default choice in black, and each forced
Open MPI coll_tuned algorithm dashed.

pap: one PNG per P, mode and size (DIR/pap-<mode>-P<P>-<bytes>B.png), speedup
over ring (mean time over ranks, ring / algorithm) against the maximum delay
(symmetric log axis, so delay 0 is drawn). Failed algorithms are left out.

suara (eb-bench suara --csv): DIR/suara.png, SUARA's predicted speedup over
the best flat algorithm and over the ring (where the ring was simulated)
against P on a log axis, one line per size, with sqrt(P / P_min) for the
growth seed 003's paper reports.

Usage: bench/plot.py RESULT.csv [MORE.csv ...] [--out DIR]
Needs matplotlib (Debian: apt-get install python3-matplotlib).
"""
import argparse
import csv
import math
import os
import sys
from collections import defaultdict

MPI_DEFAULT = "mpi:default"


def load_rows(paths):
    """{job: rows}; CSVs without a job column are sweeps."""
    rows = defaultdict(list)
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                rows[row.get("job", "sweep")].append(row)
    return rows


def is_mpi(row):
    return row.get("implementation") == "mpi" or row["algorithm"].startswith("mpi:")


def series_by_label(rows):
    """{label: {bytes: median_s}} for one collective and P. CSVs written before
    MPI rows existed carry MPI's median only in mpi_median_s."""
    series = defaultdict(dict)
    for row in rows:
        size = int(row["bytes"])
        series[row["algorithm"]][size] = float(row["median_s"])
        if not is_mpi(row):
            series[MPI_DEFAULT].setdefault(size, float(row["mpi_median_s"]))
    return series


def line_styles(plt, labels):
    """earlybird algorithms solid in strong colours, MPI's default thick black,
    forced MPI algorithms dashed in a second palette."""
    strong, muted = plt.get_cmap("tab20").colors, plt.get_cmap("Dark2").colors
    strong = strong[0::2] + strong[1::2]
    styles, n_eb, n_mpi = {}, 0, 0
    for label in labels:
        if label == MPI_DEFAULT:
            styles[label] = dict(color="black", linewidth=2.4, marker="s", markersize=4, zorder=3)
        elif label.startswith("mpi:"):
            styles[label] = dict(color=muted[n_mpi % len(muted)], linewidth=1.2, linestyle="--", marker="x",
                                 markersize=4)
            n_mpi += 1
        else:
            styles[label] = dict(color=strong[n_eb % len(strong)], linewidth=1.7, marker="o", markersize=3.5)
            n_eb += 1
    return styles


def size_label(value, _position=None):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024:
            return f"{value:g} {unit}"
        value /= 1024
    return f"{value:g} TiB"


def draw(plt, collective, ranks, rows, out_dir):
    series = series_by_label(rows)
    labels = sorted(series, key=lambda l: (l.startswith("mpi:"), l != MPI_DEFAULT, l))
    styles = line_styles(plt, labels)
    fig, ax = plt.subplots(figsize=(10, 6.5))
    for label in labels:
        sizes = sorted(series[label])
        ax.plot(sizes, [series[label][s] * 1e6 for s in sizes], label=label, **styles[label])
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(plt.FuncFormatter(size_label))
    ax.set_yscale("log")
    ax.set_xlabel("message size per rank (bytes)")
    ax.set_ylabel("latency, median of the slowest rank (us)")
    ax.set_title(f"eb-bench sweep: {collective}, P = {ranks}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    path = os.path.join(out_dir, f"sweep-{collective}-P{ranks}.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def group(rows):
    groups = defaultdict(list)
    for row in rows:
        groups[(row.get("collective", "allreduce"), row["ranks"])].append(row)
    return groups


def draw_sweeps(plt, rows, out_dir):
    for (collective, ranks), members in sorted(group(rows).items()):
        print(draw(plt, collective, ranks, members, out_dir))


# ---- pap: speedup over ring against the maximum delay ----------------------

PAP_REFERENCE = "ring"
PAP_MPI = "mpi"


def pap_series(rows):
    """{algorithm: {max_delay_ms: speedup_vs_ring}} over the rows that ran."""
    series = defaultdict(dict)
    for row in rows:
        speedup = float(row["speedup_vs_ring"])
        if row.get("status", "ok") == "ok" and not math.isnan(speedup):
            series[row["algorithm"]][float(row["max_delay_ms"])] = speedup
    return series


def pap_style(label, colour):
    if label == PAP_REFERENCE:
        return dict(color="grey", linewidth=1.2, linestyle="--", zorder=1)
    if label == PAP_MPI:
        return dict(color="black", linewidth=2.4, marker="s", markersize=4, zorder=3)
    return dict(color=colour, linewidth=1.7, marker="o", markersize=3.5)


def draw_pap(plt, ranks, mode, size, rows, out_dir):
    series = pap_series(rows)
    colours = plt.get_cmap("tab10").colors
    fig, ax = plt.subplots(figsize=(9, 6))
    others = [label for label in series if label not in (PAP_REFERENCE, PAP_MPI)]
    for n, label in enumerate([PAP_REFERENCE] + others + [PAP_MPI]):
        if label not in series:
            continue
        delays = sorted(series[label])
        ax.plot(delays, [series[label][d] for d in delays], label=label,
                **pap_style(label, colours[n % len(colours)]))
    ax.set_xscale("symlog", linthresh=1)
    delays = sorted({d for points in series.values() for d in points})
    ax.set_xticks(delays, [f"{d:g}" for d in delays])
    ax.minorticks_off()
    ax.set_xlabel("maximum delay (ms; symmetric log, 0 included)")
    ax.set_ylabel("speedup over ring: mean time over ranks, ring / algorithm")
    ax.set_title(f"eb-bench pap: {mode}, P = {ranks}, {size_label(size)} per rank")
    ax.grid(True, which="both", alpha=0.3)
    failed = sorted({row["algorithm"] for row in rows} - set(series))
    if failed:
        ax.text(0.01, 0.01, "failed, not drawn: " + ", ".join(failed), transform=ax.transAxes, fontsize=8,
                va="bottom")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(out_dir, f"pap-{mode}-P{ranks}-{size}B.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def draw_paps(plt, rows, out_dir):
    groups = defaultdict(list)
    for row in rows:
        groups[(int(row["ranks"]), row["mode"], int(row["bytes"]))].append(row)
    for (ranks, mode, size), members in sorted(groups.items()):
        print(draw_pap(plt, ranks, mode, size, members, out_dir))


def draw_suara(plt, rows, out_dir):
    if not rows:
        return
    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    by_size = defaultdict(list)
    for row in rows:
        by_size[int(row["bytes"])].append(row)
    all_ranks = sorted({int(row["ranks"]) for row in rows})
    for size, members in sorted(by_size.items()):
        members.sort(key=lambda row: int(row["ranks"]))
        ranks = [int(row["ranks"]) for row in members]
        axes[0].plot(ranks, [float(row["speedup"]) for row in members], marker="o", label=size_label(size))
        over_ring = [(int(row["ranks"]), float(row["ring_us"]) / float(row["suara_us"]))
                     for row in members if row["ring_us"]]
        if over_ring:
            axes[1].plot(*zip(*over_ring), marker="o", label=size_label(size))
    smallest = all_ranks[0]
    for ax in axes:
        ax.plot(all_ranks, [math.sqrt(p / smallest) for p in all_ranks], "k--", label=f"sqrt(P / {smallest})")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("P (ranks)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("predicted speedup: best flat / suara")
    axes[0].set_title("SUARA over the best flat algorithm")
    axes[1].set_ylabel("predicted speedup: ring / suara")
    axes[1].set_title("SUARA over the ring (simulated up to 1024 ranks)")
    fig.suptitle("eb-bench suara: schedule simulator, seed 003's machine (a model, not a measurement)")
    fig.tight_layout()
    path = os.path.join(out_dir, "suara.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(path)


SYSTEM_PYTHON = "/usr/bin/python3"


def import_pyplot():
    """matplotlib.pyplot with a file-only backend. When this interpreter lacks
    matplotlib but the system's (where Debian installs python3-matplotlib) is
    another one, rerun under the system's."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        if os.path.exists(SYSTEM_PYTHON) and os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON):
            os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])
        sys.exit("bench/plot.py needs matplotlib: apt-get install python3-matplotlib (or pip install matplotlib)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+", help="CSV files written by eb-bench sweep, pap or suara with --csv")
    parser.add_argument("--out", help="directory for the PNGs (default: next to the first CSV)")
    args = parser.parse_args()
    plt = import_pyplot()
    rows = load_rows(args.csv)
    if not rows["sweep"] and not rows["pap"] and not rows["suara"]:
        sys.exit("no sweep, pap or suara rows in " + ", ".join(args.csv))
    out_dir = args.out or os.path.dirname(os.path.abspath(args.csv[0]))
    os.makedirs(out_dir, exist_ok=True)
    draw_sweeps(plt, rows["sweep"], out_dir)
    draw_paps(plt, rows["pap"], out_dir)
    draw_suara(plt, rows["suara"], out_dir)


if __name__ == "__main__":
    main()
