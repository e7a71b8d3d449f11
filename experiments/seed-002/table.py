#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Seed 002's tables (mixed cpu_power TC2 and its A15 pair alone) next to fairsim's.

Usage: table.py SWEEP-DIR [RUNS-DIR]

For each machine and benchmark: the posting's AVG/MIN/MAX over its 20 runs for 3.9-rc2,
+shi and +shi+patches, and fairsim's over the sweep's seeds for k39, shi and patches (and
6.12 beside them). A run's figure is sysbench's total time and hackbench's Time in
seconds, and cyclictest's Avg latency over its threads in us. The last column compares
the direction of 3.9-rc2 -> +shi+patches on AVG: 'same', '!' when it differs, '=' when
either side moves by less than 1%.

With RUNS-DIR (the run script's per-run --json files of sysbench), it also prints where
each sysbench thread ran: seconds on the A15s and on the A7s, per kernel and seed.
"""
import json
import sys
from pathlib import Path

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
METRIC = {"cyclictest": "Lat-avg-us", "hackbench": "time-s"}
TITLE = {"tc2": "Mixed cpu_power (tc2: 2x A15 + 3x A7)", "tc2-2a15": "SMP (tc2-2a15: 2x A15)"}


def direction(before, after):
    if abs(after - before) < 0.01 * abs(before):
        return 0
    return 1 if after < before else -1


def main():
    d = Path(sys.argv[1])
    samples = {}
    for p in sorted((d / "points").glob("*.json")):
        pt = json.loads(p.read_text())
        c = dict(pt["coordinates"])
        name = METRIC.get(c["workloads"], "total-time-s")
        v = next((m["value"] for m in pt["metrics"] if m["name"] == name), None)
        if v is None:
            continue
        samples.setdefault((c["machines"], c["workloads"], c["features"]), []).append(v)
    n = max((len(v) for v in samples.values()), default=0)
    print(f"seed 002: AVG/MIN/MAX over runs (posting: 20 runs; fairsim: {n} seeds); "
          "sysbench and hackbench in s, cyclictest Avg latency in us")
    for machine, benches in SEED.items():
        print(f"\n{TITLE[machine]}")
        head = "".join(f"{NAMES[k]:>14}" for k in KERNELS)
        print(f"{'':12} {'':4}  posting:{head}   fairsim:{head}{'6.12':>10}  dir")
        for bench, kernels in benches.items():
            ours = {k: samples.get((machine, bench, k), []) for k in KERNELS + ["v612"]}
            if not all(ours[k] for k in KERNELS):
                continue
            for i, stat in enumerate(["AVG", "MIN", "MAX"]):
                pick = [lambda v: sum(v) / len(v), min, max][i]
                seed_cols = "".join(f"{kernels[k][i]:>14.2f}" for k in KERNELS)
                our_cols = "".join(f"{pick(ours[k]):>14.2f}" for k in KERNELS)
                v612 = f"{pick(ours['v612']):>10.2f}" if ours["v612"] else f"{'':>10}"
                mark = ""
                if stat == "AVG":
                    s = direction(kernels["k39"][0], kernels["patches"][0])
                    f = direction(pick(ours["k39"]), pick(ours["patches"]))
                    mark = "same" if s == f else ("=" if 0 in (s, f) else "!")
                label = bench if i == 0 else ""
                print(f"{label:12} {stat:4}           {seed_cols}            {our_cols}{v612}  {mark}")
    if len(sys.argv) > 2:
        where_threads_ran(Path(sys.argv[2]))


def where_threads_ran(runs):
    print("\nWhere sysbench's threads ran on tc2 (seconds on the A15s CPUs 0-1 / on the A7s CPUs 2-4, per thread)")
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
