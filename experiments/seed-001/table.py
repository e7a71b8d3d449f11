#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Seed 001's schbench percentile tables next to fairsim's, ending with the summary line.

Usage: table.py OUT-DIR   (what `run` wrote: 2x24x2/ and 2x12x2/, each with
                           KERNEL-NAME-SEED.json for 4.5 and 6.12, mainline and patch)

For each reading of the box, schbench's "Latency percentiles (usec)" rows: the posting's
mainline (Linux 4.5) and patched values, fairsim's --kernel 4.5 without and with
SIS_FIRST_IDLE (mean over seeds), the direction marks, and today's 6.12 runs (LEGACY_SIS
without and with SIS_FIRST_IDLE) as a reference column, never counted. Then where the
idle CPUs slept. Last, the headline: p50, p90, p99 and p99.9 on 2 x 12 x 2, the reading
the README says the evidence favours, and the summary line.
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from compare import Comparison, mean_se, print_comparisons  # noqa: E402

ROWS = ["50.0", "75.0", "90.0", "95.0", "99.0", "99.5", "99.9", "min", "max"]
HEADLINE = ["50.0", "90.0", "99.0", "99.9"]
# The posting's tables (001_c8bc339f0081e7d8.txt): mainline 4.5 ("numbers like this are
# typical") and the patch.
POST = {
    "mainline": {"50.0": 50, "75.0": 63, "90.0": 76, "95.0": 85, "99.0": 4680,
                 "99.5": 10192, "99.9": 10928, "min": 0, "max": 21816},
    "patch": {"50.0": 50, "75.0": 62, "90.0": 73, "95.0": 79, "99.0": 99,
              "99.5": 761, "99.9": 10160, "min": 0, "max": 14659},
}
READINGS = [("2x12x2", "2 x 12 cores x 2 threads (48 CPUs), the idle states run gave "
             "(bdx,no-C6 by default): the favoured reading, counted"),
            ("2x24x2", "2 x 24 cores x 2 threads (96 CPUs, the 2s24c2t preset): shown, "
             "not counted")]
COUNTED = "2x12x2"
NOISE_POSTING = ["posting: one schbench run per kernel (\"mainline varies a bit\"), no "
                 "spread given: every change counts as outside noise"]


def figures(doc):
    r = doc["workloads"][0]["results"]
    out = {p: r.get(f"wakeup_latency_pct{p}") for p in ROWS[:7]}
    out["min"] = r.get("wakeup_latency_min")
    out["max"] = r.get("wakeup_latency_max")
    shares = {}
    elapsed = max(1, doc["elapsed_ns"])
    for cpu in doc["cpus"]:
        for st in cpu.get("cpuidle", []):
            shares[st["name"]] = shares.get(st["name"], 0.0) + st["time_ns"]
    ncpu = max(1, len(doc["cpus"]))
    out["idle"] = {k: 100.0 * v / (elapsed * ncpu) for k, v in shares.items()}
    out["migrations_s"] = doc["scheduler"]["migrations"] / (elapsed / 1e9)
    workers = [t for t in doc["tasks"] if "-w" in t["name"]]
    out["worker_run_delay_ms"] = sum(t["run_delay_ns"] for t in workers) / 1e6
    return out


def load(out, reading):
    runs = {}
    for path in sorted(glob.glob(os.path.join(out, reading, "*.json"))):
        kernel, name, seed = os.path.basename(path)[:-5].split("-")
        with open(path) as f:
            fig = figures(json.load(f))
        # Both kernels run seeds 1..N (`run`): the scoring rule pairs them by seed.
        fig["seed"] = int(seed)
        runs.setdefault((kernel, name), []).append(fig)
    return runs


def comparisons(runs, rows):
    comps, extra = [], []
    for row in rows:
        before = runs.get(("4.5", "mainline"), [])
        after = runs.get(("4.5", "patch"), [])
        fb, sb = mean_se([r[row] for r in before])
        fa, sa = mean_se([r[row] for r in after])
        label = f"{'*' if row == '99.0' else ''}{row}th" if row[0].isdigit() else row
        # fairsim's figure is the mean over seeds of each seed's percentile: paired by seed.
        seeds = ({r["seed"]: r[row] for r in before}, {r["seed"]: r[row] for r in after})
        comps.append(Comparison(label, POST["mainline"][row], POST["patch"][row], fb, fa,
                                fs_se=(sb, sa), fs_seeds=seeds))
        gb, _ = mean_se([r[row] for r in runs.get(("6.12", "mainline"), [])])
        ga, _ = mean_se([r[row] for r in runs.get(("6.12", "patch"), [])])
        extra.append(["-" if gb is None or ga is None else f"{gb:.0f} -> {ga:.0f}"])
    return comps, extra


def idle_lines(runs):
    for key, label in ((("4.5", "mainline"), "4.5"), (("4.5", "patch"), "4.5+SIS_FIRST_IDLE"),
                       (("6.12", "mainline"), "6.12 LEGACY_SIS")):
        rs = runs.get(key, [])
        if not rs:
            continue
        names = list(rs[0]["idle"])
        parts = [f"{n} {mean_se([r['idle'].get(n, 0.0) for r in rs])[0]:.1f}" for n in names]
        migr = mean_se([r["migrations_s"] for r in rs])[0]
        delay = mean_se([r["worker_run_delay_ms"] for r in rs])[0]
        print(f"  {label:20} idle % {', '.join(parts)}; {migr:.1f} migrations/s; workers "
              f"waited {delay:.1f} ms in all for a CPU")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "target/experiments/seed-001"
    loaded = {r: load(out, r) for r, _ in READINGS}
    if not loaded[COUNTED].get(("4.5", "mainline")):
        sys.exit(f"table.py: no 4.5 runs in {out}/{COUNTED}")
    print("seed 001: schbench -c 30000 -s 30000 -m 6 -t 24 -r 30 (the 2016 binary: 2 message "
          "threads x 24 workers), --kernel 4.5 mainline vs SIS_FIRST_IDLE")
    for reading, desc in READINGS:
        runs = loaded[reading]
        if not runs:
            continue
        n = len(runs.get(("4.5", "mainline"), []))
        print(f"\n{reading}: {desc}; fairsim: mean over {n} seeds")
        comps, extra = comparisons(runs, ROWS)
        print(f"{'usec':8} | {'posting 4.5':>11} {'patch':>6} | {'fairsim 4.5':>11} "
              f"{'+SIS_FIRST_IDLE':>15} | dir  2x | 6.12 LEGACY_SIS -> +SIS_FIRST_IDLE")
        for c, e in zip(comps, extra):
            fb = "-" if c.fb is None else f"{c.fb:.0f}"
            fa = "-" if c.fa is None else f"{c.fa:.0f}"
            print(f"{c.name:8} | {c.pb:>11} {c.pa:>6} | {fb:>11} {fa:>15} | {c.mark():<4} "
                  f"{'2x' if c.within_2x() else '  '} | {e[0]}")
        idle_lines(runs)
    print()
    comps, extra = comparisons(loaded[COUNTED], HEADLINE)
    n = len(loaded[COUNTED].get(("4.5", "mainline"), []))
    print_comparisons(f"seed 001 headline: schbench wakeup latency percentiles (usec) on "
                      f"{COUNTED}, --kernel 4.5; fairsim: mean over {n} seeds",
                      comps, NOISE_POSTING, extra_heads=["6.12 before -> after"],
                      extra_cells=extra)


if __name__ == "__main__":
    main()
