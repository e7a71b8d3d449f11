#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Seed 002's tables (mixed cpu_power TC2 and its A15 pair alone) next to fairsim's,
ending with the summary line.

Usage: table.py SWEEP-3.9-DIR [SWEEP-6.12-DIR [RUNS-DIR]]

For each machine and benchmark: the posting's AVG/MIN/MAX over its 20 runs for 3.9-rc2,
+shi and +shi+patches, and fairsim's over the sweep's seeds on --kernel 3.9 for k39, shi
and patches; beside them today's 6.12 runs (the same kernels as LEGACY_LB ablations on
6.12, and 6.12's own scheduler), never counted. A run's figure is sysbench's total time
and hackbench's Time in seconds, and cyclictest's Avg latency over its threads in us. The
last column marks the direction of 3.9-rc2 -> +shi+patches on AVG.

With RUNS-DIR (the run script's per-run --json files of sysbench), it also prints where
each sysbench thread ran: seconds on the A15s and on the A7s, per kernel and seed.

The headline comparisons are the posting's "Improvement" column of the mixed cpu_power
table: 3.9-rc2 -> +shi+patches on the AVG of each of the five benchmarks.
"""
import json
import math
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from compare import Comparison, mean_se, print_comparisons  # noqa: E402

KERNELS = ["k39", "shi", "patches"]
NAMES = {"k39": "3.9-rc2", "shi": "+shi", "patches": "+shi+patches", "v612": "6.12"}
# The posting's tables: machine -> benchmark -> kernel -> (AVG, MIN, MAX).
SEED = {
    "tc2": {
        "cyclictest": {"k39": (74.9, 69, 88), "shi": (74.5, 69, 88), "patches": (75.75, 69, 94)},
        "hackbench": {"k39": (2.17, 2.10, 2.25), "shi": (2.09, 1.95, 2.48), "patches": (2.09, 2.02, 2.17)},
        "sysbench-1t": {"k39": (25.13, 16.47, 33.78), "shi": (16.47, 16.47, 16.48), "patches": (16.48, 16.47, 16.54)},
        "sysbench-2t": {"k39": (19.32, 16.48, 22.15), "shi": (18.19, 16.47, 22.19), "patches": (16.51, 16.47, 16.61)},
        "sysbench-5t": {"k39": (27.22, 25.42, 27.75), "shi": (27.71, 27.66, 27.86), "patches": (24.14, 24.04, 24.31)},
    },
    "tc2-2a15": {
        "cyclictest": {"k39": (78.6, 69, 135), "shi": (75.3, 69, 98), "patches": (77.6, 69, 125)},
        "hackbench": {"k39": (3.55, 3.51, 3.66), "shi": (3.54, 3.48, 3.65), "patches": (3.55, 3.49, 3.67)},
        "sysbench-1t": {"k39": (16.48, 16.47, 16.49), "shi": (16.48, 16.48, 16.48), "patches": (16.48, 16.48, 16.48)},
        "sysbench-2t": {"k39": (16.53, 16.47, 16.59), "shi": (16.53, 16.47, 16.57), "patches": (16.54, 16.48, 16.59)},
        "sysbench-5t": {"k39": (41.16, 41.14, 41.35), "shi": (41.15, 41.13, 41.19), "patches": (41.15, 41.11, 41.17)},
    },
}
POST_RUNS = 20
# The expected range of 20 normal samples is 3.735 standard deviations.
RANGE_TO_SD = 3.735
METRIC = {"cyclictest": "Lat-avg-us", "hackbench": "time-s"}
TITLE = {"tc2": "Mixed cpu_power (tc2: 2x A15 + 3x A7)", "tc2-2a15": "SMP (tc2-2a15: 2x A15)"}
NOISE_POSTING = [
    "posting: AVG over its 20 runs, no standard deviation given; each side's sd is taken "
    "from its MIN and MAX as (MAX - MIN) / 3.735 (the expected range of 20 normal samples), "
    "so se = sd / sqrt(20)"]


def samples(d, by_seed=False):
    """{(machine, workload, features): [value per seed]}, or with by_seed {...: {seed:
    value}}: the sweep runs the same seeds for every kernel, so the scoring rule pairs
    them by seed."""
    out = {}
    if d is None or not (Path(d) / "points").is_dir():
        return out
    for p in sorted((Path(d) / "points").glob("*.json")):
        pt = json.loads(p.read_text())
        c = dict(pt["coordinates"])
        name = METRIC.get(c["workloads"], "total-time-s")
        v = next((m["value"] for m in pt["metrics"] if m["name"] == name), None)
        if v is None:
            continue
        key = (c["machines"], c["workloads"], c["features"])
        if by_seed:
            out.setdefault(key, {})[c["seeds"]] = v
        else:
            out.setdefault(key, []).append(v)
    return out


def post_se(row):
    return (row[2] - row[1]) / RANGE_TO_SD / math.sqrt(POST_RUNS)


def comparison(machine, bench, ours, seeds):
    post = SEED[machine][bench]
    fb, sb = mean_se(ours.get((machine, bench, "k39"), []))
    fa, sa = mean_se(ours.get((machine, bench, "patches"), []))
    pairs = (seeds.get((machine, bench, "k39"), {}), seeds.get((machine, bench, "patches"), {}))
    return Comparison(f"{machine} {bench} AVG", post["k39"][0], post["patches"][0], fb, fa,
                      post_se=(post_se(post["k39"]), post_se(post["patches"])),
                      fs_se=(sb, sa), fs_seeds=pairs)


def main():
    ours = samples(sys.argv[1])
    seeds = samples(sys.argv[1], by_seed=True)
    ref = samples(sys.argv[2]) if len(sys.argv) > 2 else {}
    n = max((len(v) for v in ours.values()), default=0)
    if not n:
        sys.exit(f"table.py: no points in {sys.argv[1]}")
    print(f"seed 002: AVG/MIN/MAX over runs (posting: 20 runs; fairsim: {n} seeds); "
          "sysbench and hackbench in s, cyclictest Avg latency in us")
    print("fairsim: --kernel 3.9; 6.12 reference (not counted): the same kernels as "
          "LEGACY_LB ablations on 6.12 (k39 -> patches), and 6.12's own scheduler")
    for machine, benches in SEED.items():
        print(f"\n{TITLE[machine]}")
        head = "".join(f"{NAMES[k]:>13}" for k in KERNELS)
        print(f"{'':12} {'':4}  posting:{head}  | fairsim 3.9:{head} | dir  2x | "
              f"6.12 k39 -> patches     6.12")
        for bench, kernels in benches.items():
            cols = {k: ours.get((machine, bench, k), []) for k in KERNELS}
            if not all(cols.values()):
                continue
            c = comparison(machine, bench, ours, seeds)
            for i, stat in enumerate(["AVG", "MIN", "MAX"]):
                pick = [lambda v: sum(v) / len(v), min, max][i]
                seed_cols = "".join(f"{kernels[k][i]:>13.2f}" for k in KERNELS)
                our_cols = "".join(f"{pick(cols[k]):>13.2f}" for k in KERNELS)
                r = {k: ref.get((machine, bench, k), []) for k in ("k39", "patches", "v612")}
                rb = f"{pick(r['k39']):.2f}" if r["k39"] else "-"
                ra = f"{pick(r['patches']):.2f}" if r["patches"] else "-"
                rv = f"{pick(r['v612']):.2f}" if r["v612"] else "-"
                mark = f"{c.mark():<4} {'2x' if c.within_2x() else '  '}" if i == 0 else " " * 7
                label = bench if i == 0 else ""
                print(f"{label:12} {stat:4}          {seed_cols}  |            {our_cols} | "
                      f"{mark} | {rb:>8} -> {ra:<8} {rv:>8}")
    if len(sys.argv) > 3:
        where_threads_ran(Path(sys.argv[3]))
    print()
    comps = [comparison("tc2", b, ours, seeds) for b in SEED["tc2"]]
    extra = []
    for b in SEED["tc2"]:
        rb = mean_se(ref.get(("tc2", b, "k39"), []))[0]
        ra = mean_se(ref.get(("tc2", b, "patches"), []))[0]
        extra.append(["-" if rb is None or ra is None else f"{rb:.2f} -> {ra:.2f}"])
    print_comparisons(f"seed 002 headline: the posting's Improvement column (mixed cpu_power, "
                      f"3.9-rc2 -> +shi+patches, AVG), --kernel 3.9; fairsim: mean over {n} "
                      f"seeds", comps, NOISE_POSTING,
                      extra_heads=["6.12 LEGACY_LB before -> after"], extra_cells=extra)


def where_threads_ran(runs):
    print("\nWhere sysbench's threads ran on tc2 (seconds on the A15s CPUs 0-1 / on the A7s "
          "CPUs 2-4, per thread; k39/shi/patches on --kernel 3.9, v612 on 6.12)")
    for f in sorted(runs.glob("*.json")):
        j = json.loads(f.read_text())
        cols = []
        for t in j["tasks"]:
            if not t["name"].startswith("sysbench") or t["name"] == "sysbench":
                continue
            big = sum(ns for c, ns in t["cpu_time_ns"] if c < 2) / 1e9
            little = sum(ns for c, ns in t["cpu_time_ns"] if c >= 2) / 1e9
            cols.append(f"{big:5.1f}/{little:<5.1f}")
        print(f"  {f.stem:28} {' '.join(cols)}")


if __name__ == "__main__":
    main()
